/**
 * Clean-ups run when the process exits, however it ends (an adapter calling process.exit, an
 * error nothing caught): nothing tidemark started or made may outlive it. One listener per
 * process, whatever loads this module again (a test runner does, once per file, each load
 * with its own processes and files): each load adds its clean-up to a set the process keeps,
 * rather than a listener of its own, which would pass Node's limit of ten.
 */
const CLEANUPS = Symbol.for('tidemark.exit-cleanups');
type Holder = { [CLEANUPS]?: Set<() => void> };

export function atExit(cleanUp: () => void): void {
  const holder = globalThis as Holder;
  let cleanups = holder[CLEANUPS];
  if (cleanups === undefined) {
    const set = new Set<() => void>();
    cleanups = set;
    holder[CLEANUPS] = set;
    process.once('exit', () => {
      for (const c of set) c();
    });
  }
  cleanups.add(cleanUp);
}
