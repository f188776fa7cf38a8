import type { Binding } from '../model/binding.js';
import type { EventRef } from '../model/event.js';
import type { Contract, Delivery, DurableState, FetchRequest, Page, ResumeStyle, StoreOp } from '../model/history.js';

/**
 * The boundary between the harness and a consumer under test. Everything a consumer does
 * that matters goes through one of these calls, so the harness can record it, schedule it
 * and fault it. A call that the world faults either rejects with a WorldError or never
 * settles (the worker crashed there); the next incarnation starts from durable state only.
 */
export interface WorkerWorld {
  /** The binding this worker reads under: scope, filter, ordering, optional upper bound. */
  readonly binding: Binding;
  /** The binding's stable fingerprint; store it with progress to tell bindings apart (R2). */
  readonly fingerprint: string;
  /** What the source offers: page size, resume styles, stability contract. */
  readonly source: { readonly pageSize: number; readonly resumes: readonly ResumeStyle[]; readonly contract: Contract };
  readonly worker: string;
  readonly incarnation: number;

  /** Fetches one page of the bound stream. */
  fetch(request: FetchRequest): Promise<Page>;
  /** Reads the durable watermark and replay anchor. */
  load(): Promise<DurableState>;
  /** Tells which of these event versions have completion records. */
  completed(events: readonly EventRef[]): Promise<boolean[]>;
  /** Applies the operations in one transaction; rejects with `conflict` when a guard fails. */
  commit(ops: readonly StoreOp[], options?: { readonly fence?: number }): Promise<void>;
  /** Applies an external, non-transactional effect. */
  emit(event: EventRef, payload: string): Promise<void>;
  /** Acquires the lease; resolves with this worker's new generation. */
  lease(): Promise<number>;
  /** Claims that every eligible event has a durable outcome. Ends the incarnation. */
  caughtUp(): Promise<void>;
  /** Gives up visibly, with a reason (R9, R10). Ends the incarnation. */
  fail(reason: string): Promise<void>;
}

/** What the consumer claims about itself; selects which checks apply. */
export interface Capabilities {
  readonly delivery: Delivery;
}

/**
 * A consumer under test. `run` is one incarnation: it may keep anything in local variables,
 * but nothing survives a crash except what it committed through the world.
 */
export interface Consumer {
  readonly name: string;
  readonly capabilities: Capabilities;
  run(world: WorkerWorld): Promise<void>;
}
