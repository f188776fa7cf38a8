// checkpoint-interval.ts: a consumer that checkpoints every N records, as connectors do,
// with N an option (docs/adapters.md, "Options"):
//
//   npx tidemark check --adapter examples/checkpoint-interval.ts --option every=1000 --events 5000 --verbose
//
// It is the reference consumer with its watermark moved once every N handled records (and at
// the end of the stream) instead of after every page. With --events 5000 the worlds are
// large enough for crashes to land between its checkpoints, and --verbose prints the
// adversity census: its `between-checkpoints` line says how deep past a checkpoint a crash
// struck. A correct consumer replays those records and dedupes them through its completion
// records, so it passes.
import { referenceConsumer, type Consumer } from '../src/index.js';

export default function checkpointInterval(options: Readonly<Record<string, string>> = {}): Consumer {
  const unknown = Object.keys(options).filter((k) => k !== 'every');
  if (unknown.length > 0) throw new Error(`unknown option ${unknown.join(', ')}; this adapter takes every=N`);
  const every = Number(options.every ?? 1000);
  if (!Number.isSafeInteger(every) || every < 1) throw new Error(`every=${options.every}: expected a positive integer`);
  return referenceConsumer({ checkpointEvery: every, name: `checkpoint-every-${every}` });
}
