type Part = string | undefined;

/**
 * Values kept per tuple of up to four strings (each may be undefined), found by one Map lookup per
 * part. The hot paths used to join the parts into one key per call: a new string, flattened and
 * hashed on every lookup, where the parts themselves (a caller's tenant, a model name) are strings
 * whose hash V8 has already computed. Bounded: past `limit` tuples it starts empty again (what it
 * holds can always be rebuilt).
 */
export class TupleMap<V> {
  readonly #limit: number;
  #root = new Map<Part, Map<Part, Map<Part, Map<Part, V>>>>();
  #size = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(a: Part, b: Part, c: Part, d: Part): V | undefined {
    return this.#root.get(a)?.get(b)?.get(c)?.get(d);
  }

  set(a: Part, b: Part, c: Part, d: Part, value: V): void {
    if (this.#size >= this.#limit) this.clear();
    let second = this.#root.get(a);
    if (second === undefined) {
      second = new Map();
      this.#root.set(a, second);
    }
    let third = second.get(b);
    if (third === undefined) {
      third = new Map();
      second.set(b, third);
    }
    let fourth = third.get(c);
    if (fourth === undefined) {
      fourth = new Map();
      third.set(c, fourth);
    }
    const size = fourth.size;
    fourth.set(d, value);
    if (fourth.size > size) this.#size++;
  }

  clear(): void {
    this.#root = new Map();
    this.#size = 0;
  }
}
