import type { SpendEntry } from '../budget-store.js';

const COST_NULL = 1;
const INPUT_ABSENT = 2;
const OUTPUT_ABSENT = 4;

/**
 * The latest `size` settled entries, oldest dropped first, kept field by field in a ring rather
 * than as the entry objects. Holding the last 10,000 entry objects made every settle's entry
 * outlive the young generation: V8 then allocated them in the old generation from the start and
 * collected them there, about a fifth of an in-memory reserve + settle. Numbers go in typed arrays;
 * the strings are the caller's (a tenant, a model name), shared by every entry that names them.
 */
export class SpendLog {
  readonly #size: number;
  #capacity = 0;
  #count = 0;
  /** Where the next entry goes once the ring is full (its oldest entry). */
  #oldest = 0;
  #at = new Float64Array(0);
  #cost = new Float64Array(0);
  #input = new Float64Array(0);
  #output = new Float64Array(0);
  #absent = new Uint8Array(0);
  /** tenant, key, model, provider, reservationId: five slots per entry. */
  #strings: (string | undefined)[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  push(entry: SpendEntry): void {
    let slot: number;
    if (this.#count < this.#size) {
      if (this.#count === this.#capacity) this.#grow();
      slot = this.#count++;
    } else {
      slot = this.#oldest;
      this.#oldest = (this.#oldest + 1) % this.#size;
    }
    this.#at[slot] = entry.at;
    this.#cost[slot] = entry.costUsd ?? 0;
    this.#input[slot] = entry.inputTokens ?? 0;
    this.#output[slot] = entry.outputTokens ?? 0;
    this.#absent[slot] =
      (entry.costUsd === null ? COST_NULL : 0) |
      (entry.inputTokens === undefined ? INPUT_ABSENT : 0) |
      (entry.outputTokens === undefined ? OUTPUT_ABSENT : 0);
    const strings = this.#strings;
    const base = slot * 5;
    strings[base] = entry.tenant;
    strings[base + 1] = entry.key;
    strings[base + 2] = entry.model;
    strings[base + 3] = entry.provider;
    strings[base + 4] = entry.reservationId;
  }

  /** The entries, oldest first, as new objects. */
  entries(): SpendEntry[] {
    const result: SpendEntry[] = [];
    for (let i = 0; i < this.#count; i++) result.push(this.#entry((this.#oldest + i) % this.#count));
    return result;
  }

  #entry(slot: number): SpendEntry {
    const absent = this.#absent[slot] as number;
    const base = slot * 5;
    const strings = this.#strings;
    return {
      at: this.#at[slot] as number,
      tenant: strings[base],
      key: strings[base + 1],
      model: strings[base + 2],
      provider: strings[base + 3],
      costUsd: absent & COST_NULL ? null : (this.#cost[slot] as number),
      inputTokens: absent & INPUT_ABSENT ? undefined : this.#input[slot],
      outputTokens: absent & OUTPUT_ABSENT ? undefined : this.#output[slot],
      reservationId: strings[base + 4],
    };
  }

  /** Doubles the columns (up to `size` entries), so a store that settles little holds little. */
  #grow(): void {
    const capacity = Math.min(this.#size, Math.max(64, this.#capacity * 2));
    this.#at = grown(this.#at, capacity);
    this.#cost = grown(this.#cost, capacity);
    this.#input = grown(this.#input, capacity);
    this.#output = grown(this.#output, capacity);
    const absent = new Uint8Array(capacity);
    absent.set(this.#absent);
    this.#absent = absent;
    this.#capacity = capacity;
  }
}

function grown(old: Float64Array, capacity: number): Float64Array<ArrayBuffer> {
  const made = new Float64Array(capacity);
  made.set(old);
  return made;
}
