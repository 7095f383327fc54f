/** Options of the retry budget (see `RetryBudget`). */
export interface RetryBudgetOptions {
  /** Retries allowed as a fraction of requests in the window. */
  ratio: number;
  /** Retries always allowed per second, whatever the request count (so low traffic can retry). */
  minPerSecond: number;
  /** Length of the sliding window, in ms. */
  windowMs: number;
  /**
   * The window is the last `windowMs` in which requests came, not of clock time: a lull longer than
   * the window does not empty it, so the first calls after it are judged against the traffic
   * before it instead of against none (which, with `minPerSecond` 0, allows no retry at all until
   * 1 / ratio requests have come). @default false
   */
  skipsIdleTime?: boolean;
}

const BUCKETS = 10;

interface Bucket {
  start: number;
  requests: number;
  retries: number;
}

/**
 * Finagle-style retry budget: over a sliding window, retries ≤ ratio · requests + minPerSecond ·
 * window seconds. Stops a retry storm from multiplying load on a struggling fleet. With
 * `skipsIdleTime`, a lull does not empty the window.
 */
export class RetryBudget {
  readonly #options: RetryBudgetOptions;
  readonly #bucketMs: number;
  readonly #buckets: Bucket[] = [];
  /** The newest bucket (the array's last), where most calls are counted without reading the array. */
  #last: Bucket | undefined;

  constructor(options: RetryBudgetOptions) {
    this.#options = options;
    this.#bucketMs = Math.max(1, options.windowMs / BUCKETS);
  }

  #current(now: number): Bucket {
    const start = Math.floor(now / this.#bucketMs) * this.#bucketMs;
    let current = this.#buckets[this.#buckets.length - 1];
    if (current === undefined || current.start !== start) {
      current = { start, requests: 0, retries: 0 };
      this.#buckets.push(current);
    }
    const horizon = now - this.#options.windowMs;
    // Buckets exist only where requests or retries came: with `skipsIdleTime` an old one leaves
    // only once a window's worth of them followed it, however long ago it was.
    const keep = this.#options.skipsIdleTime === true ? BUCKETS : 0;
    while (this.#buckets.length > keep && (this.#buckets[0] as Bucket).start <= horizon)
      this.#buckets.shift();
    // `current` is never dropped (it starts within the last bucket's span, inside the window).
    this.#last = current;
    return current;
  }

  /** Counts one request (call it once per call, not per attempt). */
  recordRequest(now = Date.now()): void {
    // Most calls land in the newest bucket: counted there without the window's bookkeeping (old
    // buckets are dropped when a new one starts, or when a retry reads the window).
    const last = this.#last;
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
