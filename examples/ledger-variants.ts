// ledger-variants.ts: one adapter file for several variants of a consumer, chosen with
// `--option KEY=VALUE` (docs/adapters.md, "Options"). tidemark calls the default export with
// the options as { KEY: VALUE } and records them in every replay command and regression entry:
//
//   npx tidemark check --adapter examples/ledger-variants.ts --option failed=skip
//
// Here the one option picks what the ledger does when an event's effect fails: stop there
// (`failed=stop`, the default, correct) or go on past it (`failed=skip`, the bug of
// examples/ledger-consumer-buggy.ts). In your own project the options would be your
// consumer's configuration: a cursor operator, a checkpoint interval, a page size.
import type { Consumer } from '../src/index.js';
import correct from './ledger-consumer.js';
import skipping from './ledger-consumer-buggy.js';

const VARIANTS: Readonly<Record<string, Consumer>> = { stop: correct, skip: skipping };

export default function ledger(options: Readonly<Record<string, string>> = {}): Consumer {
  const unknown = Object.keys(options).filter((k) => k !== 'failed');
  if (unknown.length > 0) throw new Error(`unknown option ${unknown.join(', ')}; this adapter takes failed=stop|skip`);
  const failed = options.failed ?? 'stop';
  const variant = VARIANTS[failed];
  if (variant === undefined) throw new Error(`failed=${failed}: expected stop or skip`);
  return { ...variant, name: `ledger-${failed}` };
}
