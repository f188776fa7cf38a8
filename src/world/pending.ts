/**
 * The world's pending calls, grouped by worker, each group in arrival order. The scheduler
 * asks for "the k-th oldest call of worker w", so a group is a ranked queue: a Fenwick tree
 * over arrival slots finds and removes the k-th call still present in O(log n). A consumer
 * may leave tens of thousands of calls un-awaited; a linear scan per step made such a world
 * quadratic, where this keeps every step logarithmic.
 */
export class PendingCalls<T> {
  private readonly groups = new Map<string, RankedQueue<T>>();
  /** The workers that ever had a group, in code-unit order: sorted when one is added, not at every pick. */
  private order: string[] = [];
  /** Their groups, in the same order: a pick walks these rather than looking each worker up. */
  private ordered: RankedQueue<T>[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(worker: string, item: T): void {
    let group = this.groups.get(worker);
    if (!group) {
      group = new RankedQueue<T>();
      this.groups.set(worker, group);
      this.order = [...this.groups.keys()].sort();
      this.ordered = this.order.map((w) => this.groups.get(w) as RankedQueue<T>);
    }
    group.push(item);
    this.count++;
  }

  /** The workers with a pending call, in code-unit order: the order choices index into. */
  workers(): string[] {
    const out: string[] = [];
    for (const worker of this.order) if ((this.groups.get(worker) as RankedQueue<T>).size > 0) out.push(worker);
    return out;
  }

  /** How many workers have a pending call: the length of workers(), without building it (a pick does this every step). */
  activeCount(): number {
    let n = 0;
    for (const group of this.ordered) if (group.size > 0) n++;
    return n;
  }

  /** workers()[i], without building the list. */
  activeAt(i: number): string {
    let n = 0;
    for (let j = 0; j < this.ordered.length; j++) {
      if ((this.ordered[j] as RankedQueue<T>).size > 0 && n++ === i) return this.order[j] as string;
    }
    throw new RangeError(`no worker of rank ${i} has a pending call`);
  }

  /** How many calls this worker has pending. */
  sizeOf(worker: string): number {
    return this.groups.get(worker)?.size ?? 0;
  }

  /** Removes and returns the worker's call of this rank, 0 being its oldest. */
  take(worker: string, rank: number): T {
    const group = this.groups.get(worker);
    if (!group || rank < 0 || rank >= group.size) throw new RangeError(`no pending call of rank ${rank} for ${worker}`);
    this.count--;
    return group.take(rank);
  }

  clear(): void {
    this.groups.clear();
    this.order = [];
    this.ordered = [];
    this.count = 0;
  }
}

/** Items in arrival order; the k-th present one is found and removed in O(log n). */
class RankedQueue<T> {
  private slots: (T | undefined)[] = [];
  /** Fenwick tree, 1-based, over slots: 1 where a slot holds an item. */
  private tree = new Int32Array(1);
  private capacity = 0;
  private used = 0;
  size = 0;

  push(item: T): void {
    if (this.used === this.capacity) this.compact();
    const slot = this.used++;
    this.slots[slot] = item;
    this.add(slot, 1);
    this.size++;
  }

  take(rank: number): T {
    const slot = this.find(rank);
    const item = this.slots[slot] as T;
    this.slots[slot] = undefined;
    this.add(slot, -1);
    // Empty: every slot is free again (the tree is all zeros, since each add was undone, and
    // every slot was emptied as it was taken). The array keeps its length: shortening it
    // was a runtime call on nearly every step, as most queues empty at each take.
    if (--this.size === 0) this.used = 0;
    return item;
  }

  /** Rebuilds with only the present items, in order, at twice their number: amortised O(1) per push. */
  private compact(): void {
    const items = this.slots.slice(0, this.used).filter((x): x is T => x !== undefined);
    let capacity = 16;
    while (capacity < 2 * (items.length + 1)) capacity *= 2;
    this.capacity = capacity;
    this.slots = items;
    this.used = items.length;
    this.tree = new Int32Array(capacity + 1);
    // Linear Fenwick construction: each node, in order, passes its whole sum to its parent,
    // up to the last node, so sums reach the nodes beyond the items too.
    for (let i = 1; i <= capacity; i++) {
      if (i <= items.length) this.tree[i] = (this.tree[i] as number) + 1;
      const parent = i + (i & -i);
      if (parent <= capacity) this.tree[parent] = (this.tree[parent] as number) + (this.tree[i] as number);
    }
  }

  private add(slot: number, delta: number): void {
    for (let i = slot + 1; i <= this.capacity; i += i & -i) this.tree[i] = (this.tree[i] as number) + delta;
  }

  /** The slot of the item of this rank (0-based) among those present: binary lifting over the tree. */
  private find(rank: number): number {
    let pos = 0;
    let remaining = rank + 1;
    for (let step = this.capacity; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.capacity && (this.tree[next] as number) < remaining) {
        pos = next;
        remaining -= this.tree[next] as number;
      }
    }
    return pos;
  }
}
