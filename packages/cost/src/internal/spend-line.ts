/**
 * One budget line in the in-memory store: its spend by bucket start, and what is reserved on it.
 * The bucket that settles add to (the current one) is two fields rather than a Map entry: nearly
 * every settle adds to it and nearly every reserve reads it, and a Map keyed by a bucket start (a
 * double) hashed it on every look-up, three times per settle.
 */
export class SpendLine {
  reserved = 0;
  #currentStart = Number.NaN;
  #currentNano = 0;
  /** Every other bucket's spend (never the current one's). */
  readonly #older = new Map<number, number>();

  /**
   * Adds spend to the bucket that starts at `start`. When a later bucket starts, buckets before
   * `oldest` (no window counts them any more) are dropped.
   */
  add(start: number, oldest: number, nano: number): void {
    if (start === this.#currentStart) {
      this.#currentNano += nano;
      return;
    }
    if (start < this.#currentStart) {
      // An earlier bucket (a tracker whose clock is behind another's on the same store).
      this.#older.set(start, (this.#older.get(start) ?? 0) + nano);
      return;
    }
    if (!Number.isNaN(this.#currentStart)) this.#older.set(this.#currentStart, this.#currentNano);
    for (const key of this.#older.keys()) if (key < oldest) this.#older.delete(key);
    // Every key of #older is before the current bucket, so a later one has no spend yet.
    this.#currentStart = start;
    this.#currentNano = nano;
  }

  /** The spend in these buckets. */
  spent(starts: readonly number[]): number {
    let spent = 0;
    for (const start of starts)
      spent += start === this.#currentStart ? this.#currentNano : (this.#older.get(start) ?? 0);
    return spent;
  }
}
