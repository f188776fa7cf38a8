import type { SourceEvent } from '../model/event.js';
import type { Plan } from '../scenarios/plan.js';

/**
 * One large, calm world for measuring how a world's cost grows with its stream: `events`
 * events two to a key (ties across page boundaries), a third of them filtered out, a
 * replay-window source, one worker, no faults, and twenty mutations spread over the run so
 * that the source's kept stream is updated as well as read. The budget is large enough
 * for the reference consumer to finish.
 */
export function largeWorldPlan(events: number, options: { readonly pageSize?: number; readonly seed?: string } = {}): Plan {
  const pageSize = options.pageSize ?? 8;
  const stream: SourceEvent[] = Array.from({ length: events }, (_, i) => {
    const kind = i % 3 === 0 ? 'refund' : 'order';
    const id = `e${String(i).padStart(6, '0')}`;
    return { id, version: 1, key: [Math.floor(i / 2)], attrs: { kind }, payload: `${id}:${kind}` };
  });
  const spacing = Math.max(1, Math.floor(events / pageSize / 25));
  const mutations = Array.from({ length: 20 }, (_, i) => ({
    before: { call: 'fetch' as const, nth: 10 + i * spacing },
    kind: (['insert', 'move', 'flip'] as const)[i % 3] as 'insert' | 'move' | 'flip',
    target: i * 7919,
    back: 3,
  }));
  return {
    events: stream,
    binding: { scope: 'orders', filter: { kind: 'equals', attr: 'kind', value: 'order' }, ordering: ['ts'], upTo: null },
    source: { pageSize, resumes: ['after', 'key-gt', 'key-gte', 'offset'], contract: { kind: 'replay-window', window: 4 } },
    faults: [],
    schedule: [],
    seed: options.seed ?? '7',
    budget: { adversity: events * 20, drain: events * 20 },
    workers: 1,
    leaseTtl: 10,
    mutations,
    rebind: null,
    poison: [],
  };
}
