// HPACK's dynamic table (RFC 7541 §2.3.2, §4): newest entry first, evicted oldest first when the
// octets it holds would pass its maximum size. A ring of strings that grows by doubling, so it
// holds what the connection put in it, never more than its maximum size allows (32 octets an entry).

/** The octets an entry counts for (§4.1): a string holds one octet per character (latin1). */
export function entrySize(name: string, value: string): number {
  return name.length + value.length + 32;
}

export class DynamicTable {
  #names: string[] = new Array<string>(16).fill('');
  #values: string[] = new Array<string>(16).fill('');
  #mask = 15;
  #oldest = 0;
  /** Entries held. */
  count = 0;
  /** Octets held (§4.1). */
  size = 0;
  /** Octets the table may hold. */
  maxSize: number;
  readonly #onEvict: ((name: string, value: string) => void) | undefined;

  constructor(maxSize: number, onEvict?: (name: string, value: string) => void) {
    this.maxSize = maxSize;
    this.#onEvict = onEvict;
  }

  /** Name of the entry at dynamic index `index` (1 = newest); the caller checks 1 ≤ index ≤ count. */
  name(index: number): string {
    return this.#names[(this.#oldest + this.count - index) & this.#mask] as string;
  }

  value(index: number): string {
    return this.#values[(this.#oldest + this.count - index) & this.#mask] as string;
  }

  /** Adds an entry, evicting as needed; one larger than the table empties it and is not kept (§4.4). */
  add(name: string, value: string): void {
    const size = entrySize(name, value);
    this.#evictTo(this.maxSize - size);
    if (size > this.maxSize) return;
    if (this.count > this.#mask) this.#grow();
    const slot = (this.#oldest + this.count) & this.#mask;
    this.#names[slot] = name;
    this.#values[slot] = value;
    this.count++;
    this.size += size;
  }

  /** A new maximum size (a dynamic table size update, §6.3): evicts down to it. */
  resize(maxSize: number): void {
    this.maxSize = maxSize;
    this.#evictTo(maxSize);
  }

  #evictTo(size: number): void {
    while (this.size > size && this.count > 0) {
      const slot = this.#oldest;
      const name = this.#names[slot] as string;
      const value = this.#values[slot] as string;
      // Drop the references so the strings can be collected.
      this.#names[slot] = '';
      this.#values[slot] = '';
      this.#oldest = (slot + 1) & this.#mask;
      this.count--;
      this.size -= entrySize(name, value);
      this.#onEvict?.(name, value);
    }
  }

  #grow(): void {
    const capacity = 2 * (this.#mask + 1);
    const names = new Array<string>(capacity).fill('');
    const values = new Array<string>(capacity).fill('');
    for (let i = 0; i < this.count; i++) {
      const slot = (this.#oldest + i) & this.#mask;
      names[i] = this.#names[slot] as string;
      values[i] = this.#values[slot] as string;
    }
    this.#names = names;
    this.#values = values;
    this.#mask = capacity - 1;
    this.#oldest = 0;
  }
}
