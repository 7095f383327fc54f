/** What the fair queue needs of an item. */
export interface FairItem {
  readonly tenant: string;
  readonly rows: number;
  readonly enqueuedAt: number;
}

interface TenantQueue<T> {
  readonly tenant: string;
  readonly weight: number;
  items: T[];
  head: number;
  /** Rows this tenant may still take before its turn passes (deficit round robin). */
  deficit: number;
}

/**
 * Per-tenant FIFO sub-queues drained by deficit round robin measured in rows: each turn a tenant
 * earns rows in proportion to its weight and takes whole items while its credit lasts, so a tenant
 * that floods the queue gets its share of each batch and no more. The turn order persists across
 * batches.
 */
export class FairQueue<T extends FairItem> {
  readonly #weightOf: (tenant: string) => number;
  readonly #tenants = new Map<string, TenantQueue<T>>();
  /** Tenants with queued items, in round-robin order. */
  readonly #ring: TenantQueue<T>[] = [];
  #cursor = 0;
  #size = 0;
  #rows = 0;

  constructor(weightOf: (tenant: string) => number) {
    this.#weightOf = weightOf;
  }

  get size(): number {
    return this.#size;
  }

  get rows(): number {
    return this.#rows;
  }

  push(item: T): void {
    let queue = this.#tenants.get(item.tenant);
    if (queue === undefined) {
      queue = { tenant: item.tenant, weight: this.#weightOf(item.tenant), items: [], head: 0, deficit: 0 };
      this.#tenants.set(item.tenant, queue);
    }
    if (queue.items.length === queue.head) this.#ring.push(queue);
    queue.items.push(item);
    this.#size += 1;
    this.#rows += item.rows;
  }

  /** Removes a queued item (cancelled or timed out); false when it is not queued here. */
  remove(item: T): boolean {
    const queue = this.#tenants.get(item.tenant);
    if (queue === undefined) return false;
    const index = queue.items.indexOf(item, queue.head);
    if (index === -1) return false;
    queue.items.splice(index, 1);
    this.#size -= 1;
    this.#rows -= item.rows;
    if (queue.items.length === queue.head) this.#retire(queue);
    return true;
  }

  /** The item that has waited longest (heads are each tenant's oldest). */
  oldest(): T | undefined {
    let oldest: T | undefined;
    for (const queue of this.#ring) {
      const head = queue.items[queue.head] as T;
      if (oldest === undefined || head.enqueuedAt < oldest.enqueuedAt) oldest = head;
    }
    return oldest;
  }

  /**
   * Takes whole items for one batch of at most `capacity` rows, fairly across tenants. An item larger
   * than `capacity` is returned alone when it comes first, so oversize calls still go (by themselves).
   */
  take(capacity: number): T[] {
    const taken: T[] = [];
    let remaining = capacity;
    // Remaining capacity only shrinks, so a tenant whose head does not fit stays blocked for this batch.
    const blocked = new Set<TenantQueue<T>>();
    let minWeight = Number.POSITIVE_INFINITY;
    for (const queue of this.#ring) minWeight = Math.min(minWeight, queue.weight);
    while (remaining > 0 && this.#ring.length > blocked.size) {
      if (this.#cursor >= this.#ring.length) this.#cursor = 0;
      const queue = this.#ring[this.#cursor] as TenantQueue<T>;
      if (blocked.has(queue)) {
        this.#cursor += 1;
        continue;
      }
      let head = queue.items[queue.head] as T;
      if (head.rows > remaining) {
        if (taken.length === 0) {
          this.#shift(queue);
          taken.push(head);
          queue.deficit = 0;
          if (queue.items.length === queue.head) this.#retire(queue);
          else this.#cursor += 1;
          return taken;
        }
        blocked.add(queue);
        this.#cursor += 1;
        continue;
      }
      queue.deficit += queue.weight / minWeight;
      while (head !== undefined && head.rows <= queue.deficit && head.rows <= remaining) {
        this.#shift(queue);
        taken.push(head);
        queue.deficit -= head.rows;
        remaining -= head.rows;
        head = queue.items[queue.head] as T;
      }
      if (queue.items.length === queue.head) this.#retire(queue);
      else this.#cursor += 1;
    }
    return taken;
  }

  /** Empties the queue (close), oldest tenants' items first. */
  drain(): T[] {
    const all: T[] = [];
    for (const queue of this.#ring) all.push(...queue.items.slice(queue.head));
    this.#ring.length = 0;
    this.#tenants.clear();
    this.#size = 0;
    this.#rows = 0;
    return all;
  }

  #shift(queue: TenantQueue<T>): void {
    const item = queue.items[queue.head] as T;
    queue.head += 1;
    this.#size -= 1;
    this.#rows -= item.rows;
    if (queue.head > 64 && queue.head * 2 > queue.items.length) {
      queue.items = queue.items.slice(queue.head);
      queue.head = 0;
    }
  }

  /** An emptied tenant leaves the ring and forgets its credit (standard DRR). */
  #retire(queue: TenantQueue<T>): void {
    const index = this.#ring.indexOf(queue);
    if (index !== -1) {
      this.#ring.splice(index, 1);
      if (index < this.#cursor) this.#cursor -= 1;
    }
    queue.items = [];
    queue.head = 0;
    queue.deficit = 0;
    this.#tenants.delete(queue.tenant);
  }
}
