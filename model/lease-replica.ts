/**
 * The lease, as ground truth replays it: written from the rule the documents state, not from
 * the world's code, so that a misreading of the rule on either side shows as a disagreement
 * (test/model/lease-replica.test.ts holds the two together over generated call sequences).
 *
 * The rule, docs/design.md ("The world"): "Lease: generations for competing workers. A lease
 * expires after a number of world calls without renewal; renewing keeps the generation,
 * taking it over starts a new one." And docs/adapters.md (`leaseTtl`): "A lease granted at
 * step s is held through step s + value - 1"; while another worker holds an unexpired lease,
 * a request is refused with `conflict` (cause `lease-held`).
 *
 * Read literally: the lease remembers who took or renewed it last and at which step. A
 * request from anyone else before that grant has run its time is refused and changes
 * nothing. Any other request is granted at its own step: to the one who holds it (or held it
 * last, since nobody took it over) with the same generation, to anyone else with the next.
 * A holder is one incarnation: a worker born again is someone else.
 */
export class LeaseReplica {
  private holder: string | null = null;
  /** The step of the last grant: the lease is held through `grantedAt + ttlSteps - 1`. */
  private grantedAt = 0;
  private newest = 0;

  constructor(private readonly ttlSteps: number) {}

  /** The newest generation granted so far; 0 before the first grant. */
  get generation(): number {
    return this.newest;
  }

  /** Who was granted the newest generation (took or renewed the lease last); null before the first grant. */
  get holderOfNewest(): string | null {
    return this.holder;
  }

  /** Whether the last grant still holds at `step`. */
  private heldAt(step: number): boolean {
    return step <= this.grantedAt + this.ttlSteps - 1;
  }

  /** A request by `who` at `step`: the generation granted, or `conflict` when another holds the lease unexpired. */
  request(who: string, step: number): number | 'conflict' {
    if (this.holder !== null && this.holder !== who && this.heldAt(step)) return 'conflict';
    if (this.holder !== who) this.newest += 1;
    this.holder = who;
    this.grantedAt = step;
    return this.newest;
  }
}
