/**
 * How a world ended, as it tells its consumer (see WORLD_ENDED): `done` when it ran to its
 * end, `stopped` when it hung or an error stopped it (a protocol error, an inspection that
 * failed, an exception in the harness).
 */
export type WorldEnd = 'done' | 'stopped';

/**
 * The key of a consumer's optional hook `[WORLD_ENDED](how)`, which the world calls once it is
 * over, after it stopped every incarnation of it and before it returns. For a consumer that
 * keeps processes of its own between incarnations (the process bridge's spare and idle
 * sessions): the world's end is a point in the run, where an end guessed from the event loop
 * (nobody took a process by the end of the turn) comes whenever the loop gets round to it.
 * A symbol, not a documented member: no consumer written by hand needs it.
 */
export const WORLD_ENDED: unique symbol = Symbol('tidemark.world-ended');

/**
 * A consumer that may have the hook. Kept out of Consumer and BlackboxConsumer
 * (adapter/consumer.ts): a symbol in those types would be in the type of every adapter built
 * from them, and a module declaring such an adapter's type would have to name it. Here, in
 * the world's own layer, since the world imports only types from the adapters'.
 */
export type WorldEndHook = { [WORLD_ENDED]?(how: WorldEnd): void };
