import { PROFILES } from '../../scenarios/profiles.js';
import type { Consumer } from '../adapter/consumer.js';
import { MUTANTS } from './mutants.js';
import { referenceConsumer } from './reference.js';

/**
 * Built-in consumers by name, so a replay command can name the consumer it replays. The
 * reference consumer comes in the delivery modes and concurrency it supports.
 */
export const BUILT_IN: ReadonlyMap<string, () => Consumer> = new Map<string, () => Consumer>([
  ['reference', () => referenceConsumer({ name: 'reference' })],
  ['reference-exactly-once', () => referenceConsumer({ name: 'reference-exactly-once', delivery: 'exactly-once' })],
  ['reference-concurrent', () => referenceConsumer({ name: 'reference-concurrent', concurrency: 3 })],
  ['reference-outbox', () => referenceConsumer({ name: 'reference-outbox', delivery: 'outbox' })],
  ['reference-cursor', () => referenceConsumer({ name: 'reference-cursor', bookmark: 'cursor' })],
  ['reference-newest-first', () => referenceConsumer({ name: 'reference-newest-first', order: 'newest-first' })],
  ['reference-scroll', () => referenceConsumer({ name: 'reference-scroll', profile: PROFILES.scrollApi })],
  ['reference-iterator', () => referenceConsumer({ name: 'reference-iterator', profile: PROFILES.shardIterator })],
  ...MUTANTS.map((m) => [m.name, () => m.consumer] as const),
]);

export function builtInConsumer(name: string): Consumer | undefined {
  return BUILT_IN.get(name)?.();
}
