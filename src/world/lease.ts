import { WorldError } from './errors.js';

/**
 * The lease competing workers hold to own the stream. Time is the world's step count, so
 * expiry is as deterministic as everything else. Anyone but the holder is refused until
 * the lease expires. A paused holder therefore loses the lease without knowing it, which is
 * exactly the stale worker that fencing must stop.
 * Acquiring after another holder's expiry starts a new generation; the holder itself
 * renewing, even late, keeps its own.
 */
export class Lease {
  private holder: string | null = null;
  private expiresAt = 0;
  generation = 0;

  constructor(private readonly ttl: number) {}

  acquire(who: string, now: number): number {
    if (this.holder !== null && this.holder !== who && this.expiresAt > now) {
      throw new WorldError('conflict', true, `the lease is held by ${this.holder} until step ${this.expiresAt}`, { cause: 'lease-held' });
    }
    // A holder renewing late keeps its generation when nobody took the lease meanwhile:
    // no newer generation exists, so nothing it fences can be stale.
    if (this.holder !== who) this.generation++;
    this.holder = who;
    this.expiresAt = now + this.ttl;
    return this.generation;
  }
}
