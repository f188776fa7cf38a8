/**
 * The commands tidemark prints to replay a failure, built from how the consumer was named:
 * the same text from `check`, from `tidemark merge` of its shards, and in JUnit reports.
 */

/** The flags that name a consumer again, from its key in the regression file and its options (see the CLI's target). */
export function targetFlag(id: string, options: Readonly<Record<string, string>> = {}): string {
  const more = Object.entries(options).map(([k, v]) => ` --option ${shellQuote(`${k}=${v}`)}`).join('');
  if (id.startsWith('builtin:')) return `--consumer ${id.slice('builtin:'.length)}${more}`;
  if (id.startsWith('command:')) return `--command ${shellQuote(id.slice('command:'.length))}${more}`;
  return `--adapter ${shellQuote(id)}${more}`;
}

/** A seed as a flag that parses back: `--seed=-5` for a negative one, which `--seed -5` would not be. */
export function seedFlag(seed: number): string {
  return seed < 0 ? `--seed=${seed}` : `--seed ${seed}`;
}

/** The replay command of a named scenario (`what` is its name) or a world (`what` is `seed|path`, or `seed|path|events`: see worldWhat). */
export function replayCommand(flag: string, kind: 'scenario' | 'world', what: string): string {
  if (kind === 'scenario') return `npx tidemark replay ${flag} --scenario ${shellQuote(what)}`;
  const [seed, path, events] = what.split('|');
  return `npx tidemark replay ${flag} ${seedFlag(Number(seed))} --path "${path}"${events === undefined ? '' : ` --events ${events}`}`;
}

/** A generated world's address for replayCommand: its seed and path, and its size when one was asked for (`--events`). */
export function worldWhat(w: { readonly seed: number; readonly path: string | null; readonly events?: number | undefined }): string {
  return `${w.seed}|${w.path}${w.events === undefined ? '' : `|${w.events}`}`;
}

/** Quotes a value for a POSIX shell, so a printed replay command can be pasted as it is. */
export function shellQuote(value: string): string {
  return /^[\w./:=@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
