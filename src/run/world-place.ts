/**
 * Where a world that threw was: a named scenario, or a generated world's seed and path. An
 * error that stops the run from inside one world (an adapter breaking its contract there, a
 * harness bug) carries it, so that the command reporting it can print how to replay that
 * world: such an error is often a consumer's defect the contract cannot judge (a store that
 * lost an effect it had shown), and the engineer needs the world that shows it.
 */
export type WorldPlace = { readonly scenario: string } | { readonly seed: number; readonly path: string };

const PLACE = Symbol('tidemark.worldPlace');

/** Notes where `error` was thrown, unless an inner run already did (the innermost place is the exact one). */
export function placeError(error: unknown, place: WorldPlace): void {
  if (error instanceof Error && !Object.hasOwn(error, PLACE)) Object.defineProperty(error, PLACE, { value: Object.freeze({ ...place }), enumerable: false });
}

/** Where an error was thrown, if a world's run threw it. */
export function placeOf(error: unknown): WorldPlace | null {
  return error instanceof Error && Object.hasOwn(error, PLACE) ? ((error as unknown as Record<symbol, WorldPlace>)[PLACE] ?? null) : null;
}
