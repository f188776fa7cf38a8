import type { Binding } from '../../model/binding.js';
import type { EventRef } from '../../model/event.js';
import type { Contract, Delivery, DeliveryOrder, DurableState, FetchRequest, Page, ResumeStyle, StoreOp } from '../../model/api.js';
import type { TokenKind } from '../../model/tokens.js';
import type { SourceProfile } from '../../scenarios/profiles.js';

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
  /**
   * What the source offers: page size, resume styles, stability contract, and `order:
   * 'newest-first'` when it lists the newest events first (absent: ascending), and `tokens`
   * when a page token is not a plain continuation (`scroll` or `iterator`: see model/tokens.ts).
   */
  readonly source: { readonly pageSize: number; readonly resumes: readonly ResumeStyle[]; readonly contract: Contract; readonly order?: DeliveryOrder; readonly tokens?: TokenKind };
  readonly worker: string;
  readonly incarnation: number;
  /**
   * How long the lease lasts without renewal, and the unit it is counted in. The world's
   * clock counts steps, the numbers a timeline prints: every call any worker makes, every
   * worker start or end, every source change and every look into a blackbox store is one
   * step. A lease granted at step s is held through step s + value - 1; from step
   * s + value on, another worker may take it. Renew well within it.
   */
  readonly leaseTtl: { readonly value: number; readonly unit: 'steps' };
  /** Aborted when this incarnation dies (a crash, the end of a phase, a rebind). */
  readonly signal: AbortSignal;
  /**
   * For consumers that work outside the process (see the process bridge): tells the world
   * that this incarnation is busy and will call again, so that the scheduler waits for it
   * instead of racing it. Call the returned function when the next call has been made.
   * `limitMs` replaces the consumer's stall limit for this hold (a process still starting
   * up is allowed its hello limit, not the limit between calls).
   */
  hold(note?: () => string, limitMs?: number): () => void;
  /**
   * For consumers that hold the world (another process): this incarnation cannot go on, for
   * this reason (the process it runs loops without making progress, say). Say it while
   * holding, and hold until the incarnation is stopped: the world ends the phase as hung at
   * the next point it looks, with the reason, as it ends one that stalled, and the run is
   * `unknown`. The reason goes into the history: it must be the same on every run.
   */
  stuck(reason: string): void;

  /** Fetches one page of the bound stream. */
  fetch(request: FetchRequest): Promise<Page>;
  /** Reads the durable watermark and replay anchor. */
  load(): Promise<DurableState>;
  /** Tells which of these event versions have completion records. */
  completed(events: readonly EventRef[]): Promise<boolean[]>;
  /** Applies the operations in one transaction; rejects with `conflict` when a guard fails. */
  commit(ops: readonly StoreOp[], options?: { readonly fence?: number }): Promise<void>;
  /**
   * Applies an external, non-transactional effect. `key`, for an effect that carries the
   * event's ordering key beside its payload (a connector's record carries its cursor value):
   * the checker holds it to the key the source served that version at, as it holds the
   * payload to the content served; null says the effect carries none that could be read.
   */
  emit(event: EventRef, payload: string, key?: readonly number[] | null): Promise<void>;
  /** Acquires the lease; resolves with this worker's new generation. */
  lease(): Promise<number>;
  /** Claims that every eligible event has a durable outcome. Ends the incarnation. */
  caughtUp(): Promise<void>;
  /** Gives up visibly, with a reason (R9, R10). Ends the incarnation. */
  fail(reason: string): Promise<void>;
}

/** What the consumer claims about itself; selects which checks and worlds apply. */
export interface Capabilities {
  /** `exactly-once` turns a second effect for one event version into an anomaly. */
  readonly delivery: Delivery;
  /**
   * The source contracts the consumer supports; worlds and scenarios with other contracts
   * are skipped, and reported as skipped. Default: all four.
   */
  readonly contracts?: readonly Contract['kind'][];
  /**
   * The source API the consumer is written against: the resume forms it uses, its key
   * arity, whether records change, what it does with a refused effect (docs/adapters.md,
   * Source profiles; presets in `PROFILES`). Worlds fix what it says and vary the rest;
   * named scenarios it excludes are skipped, with the reason. Default: everything open.
   */
  readonly profile?: SourceProfile;
}

/**
 * A whitebox consumer: it keeps all durable state in the harness's store (`load`,
 * `completed`, `commit`), so every durable step is visible and faultable. `run` is one
 * incarnation: it may keep anything in local variables, but nothing survives a crash
 * except what it committed through the world.
 */
export interface Consumer {
  readonly name: string;
  readonly capabilities: Capabilities;
  readonly kind?: 'whitebox';
  /** For consumers that hold the world (another process): how long one may work between calls. Default 10 s. */
  readonly stallMs?: number;
  run(world: WorkerWorld): Promise<void>;
}

/** What a blackbox consumer's own store holds durably, as its inspection hook reports it. */
export interface Inspection {
  /**
   * The durable watermark, exactly as stored: any point of the bound order (see
   * docs/adapters.md for the forms), or null for none yet.
   */
  readonly watermark: unknown;
  /**
   * For a consumer that keeps state per binding (one bookmark per stream, as Singer taps do):
   * its watermark under each binding fingerprint. When present, the harness reads the
   * current binding's entry and ignores `watermark`; an absent or null entry means "none yet
   * for this binding", so a rebind to a fresh stream is not a watermark written as null.
   */
  readonly watermarks?: Readonly<Record<string, unknown>>;
  /**
   * The durable effects in its own store, duplicates included. They only grow: each
   * inspection shows every effect shown before, unchanged, in any order (an append-only log,
   * oldest first, is simplest). Effects sent to the harness's sink with `emit` are seen
   * directly and need not be listed.
   */
  readonly effects: readonly { readonly event: EventRef; readonly payload: string }[];
}

/**
 * A blackbox consumer keeps its own durable store (a real database, say) and lets the
 * harness look inside through `inspect`. The harness still owns the source, the sink and
 * the lease, crashes the consumer at its calls into them, and inspects the store before
 * every call, so a durable write is seen at the first call boundary after it.
 */
export interface BlackboxConsumer<Store = unknown> {
  readonly name: string;
  readonly capabilities: Capabilities;
  readonly kind: 'blackbox';
  readonly stallMs?: number;
  /** A fresh, empty durable store for one world. It outlives crashes, as a database does. */
  open(): Store | Promise<Store>;
  /** One incarnation, with the world (use fetch, emit, lease, caughtUp, fail) and the durable store. */
  run(world: WorkerWorld, store: Store): Promise<void>;
  /** Reads what is durable in the store right now. */
  inspect(store: Store): Inspection | Promise<Inspection>;
  /** Releases the store when the world is done. */
  close?(store: Store): void | Promise<void>;
}

/** Anything the harness can check. */
export type AnyConsumer = Consumer | BlackboxConsumer<any>;
