/**
 * Where a world that threw was: a named scenario, or a generated world's seed and path (and
 * the size it was drawn at, `--events`, when not the default). An error that stops the run
 * from inside one world (an adapter breaking its contract there, a harness bug) carries it,
 * so that the command reporting it can print how to replay that world: such an error is often
 * a consumer's defect the contract cannot judge (a store that lost an effect it had shown),
 * and the engineer needs the world that shows it.
 */
export type WorldPlace = { readonly scenario: string } | { readonly seed: number; readonly path: string; readonly events?: number | undefined };

/** Kept beside the error, not on it: an error is the thrower's object. */
const places = new WeakMap<Error, WorldPlace>();

/** Notes where `error` was thrown, unless an inner run already did (the innermost place is the exact one). */
export function placeError(error: unknown, place: WorldPlace): void {
  if (error instanceof Error && !places.has(error)) places.set(error, Object.freeze({ ...place }));
}

/**
 * Notes the size the generated world `error` was thrown in was drawn at: the search that
 * placed it by seed and path does not know it, the run that asked for the size does.
 */
export function sizePlace(error: unknown, events: number | undefined): void {
  const place = error instanceof Error ? places.get(error) : undefined;
  if (events === undefined || place === undefined || 'scenario' in place || place.events !== undefined) return;
  places.set(error as Error, Object.freeze({ ...place, events }));
}

/** Where an error was thrown, if a world's run threw it. */
export function placeOf(error: unknown): WorldPlace | null {
  return (error instanceof Error ? places.get(error) : undefined) ?? null;
}
