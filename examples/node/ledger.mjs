// The ledger of examples/node/consumer.mjs, as a plain consumer object: the process example
// serves it over stdio, and examples/node/in-process.mjs hands the very same object to the
// harness as an in-process adapter, so both ways of running one design can be compared
// side by side, world for world. examples/python/ledger_consumer.py is the same design call
// for call, so it takes the same path through every world too.
// Progress is a position { key, id } stored with the binding's fingerprint; effects go to
// the sink, each followed by its completion record; the watermark moves only through the
// handled prefix, fenced by the lease generation and a compare-and-set.

const before = (a, b) => {
  for (let i = 0; i < Math.min(a.key.length, b.key.length); i++) if (a.key[i] !== b.key[i]) return a.key[i] < b.key[i];
  return a.key.length !== b.key.length ? a.key.length < b.key.length : a.id < b.id;
};
const pos = (e) => ({ key: e.key, id: e.id });
const ref = (e) => ({ id: e.id, version: e.version });

/** The effect, then its completion record. A crash between the two repeats the effect. */
async function post(world, e) {
  try {
    await world.emit(ref(e), e.payload);
  } catch (error) {
    if (error.code !== 'rejected') throw error;
    // A poison event is refused every time: park it, as its durable outcome, in one commit.
    return await world.commit([
      { op: 'dead-letter', event: ref(e), reason: error.message },
      { op: 'complete', event: ref(e) },
    ]);
  }
  await world.commit([{ op: 'complete', event: ref(e) }]);
}

export const ledger = {
  name: 'node-ledger',
  capabilities: { delivery: 'at-least-once' },
  async run(world) {
    const contract = world.source.contract;
    for (;;) {
      try {
        const generation = await world.lease();
        const state = await world.load();
        let stored = state.watermark?.binding === world.fingerprint ? state.watermark.value : null;
        let resume = stored && world.source.resumes.includes('after') ? { kind: 'after', position: stored } : { kind: 'start' };
        let head = null;
        for (;;) {
          const page = await world.fetch({ resume, limit: world.source.pageSize });
          if (page.head !== null) head = Math.max(head ?? page.head, page.head);
          const events = [...page.events].sort((a, b) => (before(a, b) ? -1 : 1)).filter((e) => !stored || before(stored, e));
          const done = await world.completed(events.map(ref));
          let last = -1;
          for (const [i, e] of events.entries()) {
            if (!done[i]) await post(world, e);
            const settled = contract.kind === 'snapshot' || contract.kind === 'insertion-stable' || (contract.kind === 'replay-window' && head !== null && e.key[0] < head - contract.window);
            if (settled && last === i - 1) last = i;
          }
          if (last >= 0) {
            const value = pos(events[last]);
            await world.commit([{ op: 'watermark', binding: world.fingerprint, value, expect: stored }], { fence: generation });
            stored = value;
          }
          if (page.next === null) break;
          if ((await world.lease()) !== generation) throw Object.assign(new Error('lost the lease'), { code: 'conflict' });
          // The token only continues this traversal; it is never the watermark.
          resume = { kind: 'token', token: page.next };
        }
        if (contract.kind === 'none') return await world.fail('the source promises no stability: no hole can be proven empty');
        return await world.caughtUp();
      } catch (error) {
        if (error.name !== 'WorldError') throw error;
      }
    }
  },
};
