/** Options of the retry budget (see `RetryBudget`). */
export interface RetryBudgetOptions {
  /** Retries allowed as a fraction of requests in the window. */
  ratio: number;
  /** Retries always allowed per second, whatever the request count (so low traffic can retry). */
  minPerSecond: number;
  /** Length of the sliding window, in ms. */
  windowMs: number;
}

const BUCKETS = 10;

interface Bucket {
  start: number;
  requests: number;
  retries: number;
}

/**
 * Finagle-style retry budget: over a sliding window, retries ≤ ratio · requests + minPerSecond ·
 * window seconds. Stops a retry storm from multiplying load on a struggling fleet.
 */
export class RetryBudget {
  readonly #options: RetryBudgetOptions;
  readonly #bucketMs: number;
  readonly #buckets: Bucket[] = [];

  constructor(options: RetryBudgetOptions) {
    this.#options = options;
    this.#bucketMs = Math.max(1, options.windowMs / BUCKETS);
  }

  #current(now: number): Bucket {
    const start = Math.floor(now / this.#bucketMs) * this.#bucketMs;
    const horizon = now - this.#options.windowMs;
    while (this.#buckets.length > 0 && (this.#buckets[0] as Bucket).start <= horizon) this.#buckets.shift();
    const last = this.#buckets[this.#buckets.length - 1];
    if (last !== undefined && last.start === start) return last;
    const bucket = { start, requests: 0, retries: 0 };
    this.#buckets.push(bucket);
    return bucket;
  }

  /** Counts one request (call it once per call, not per attempt). */
  recordRequest(now = Date.now()): void {
    // Most calls land in the newest bucket: counted there without the window's bookkeeping (old
    // buckets are dropped when a new one starts, or when a retry reads the window).
    const last = this.#buckets[this.#buckets.length - 1];
    if (last !== undefined && now >= last.start && now < last.start + this.#bucketMs) last.requests += 1;
    else this.#current(now).requests += 1;
  }

  /** Takes one retry from the budget; false when the budget is spent. */
  tryRetry(now = Date.now()): boolean {
    const bucket = this.#current(now);
    let requests = 0;
    let retries = 0;
    for (const entry of this.#buckets) {
      requests += entry.requests;
      retries += entry.retries;
    }
    const allowed =
      this.#options.ratio * requests + (this.#options.minPerSecond * this.#options.windowMs) / 1000;
    if (retries + 1 > allowed) return false;
    bucket.retries += 1;
    return true;
  }
}
