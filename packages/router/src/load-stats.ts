/** Latencies kept per target and model for percentiles (hedge delay): the most recent ones. */
const WINDOW = 128;

/**
 * What the router has seen of one target serving one model: calls in flight from this process,
 * and exponentially weighted latencies of the answers. Time-based decay (weight e^(−Δt/τ)) as in
 * Finagle's and Linkerd's peak EWMA, so a quiet target's figure ages by time, not by call count.
 * `peakMs` jumps to a slower answer at once and decays back; `ewmaMs` follows the plain average.
 * Latencies are as this process sees them: queue wait at the server plus service time plus transfer.
 */
export class LoadStats {
  inFlight = 0;
  /** Answers recorded. */
  samples = 0;
  ewmaMs = 0;
  peakMs = 0;
  #at = 0;
  readonly #decayMs: number;
  readonly #recent = new Float64Array(WINDOW);
  #sorted: number[] | undefined;
  /** The target's count over all its models, kept in step. */
  readonly #total: { inFlight: number } | undefined;

  constructor(decayMs: number, total?: { inFlight: number }) {
    this.#decayMs = decayMs;
    this.#total = total;
  }

  start(): void {
    this.inFlight += 1;
    if (this.#total !== undefined) this.#total.inFlight += 1;
  }

  end(): void {
    if (this.inFlight === 0) return;
    this.inFlight -= 1;
    if (this.#total !== undefined) this.#total.inFlight -= 1;
  }

  /**
   * Records one answer's latency (a unary call's answer, a stream's first chunk). `now` is any
   * monotonic clock in ms (the router passes `performance.now()`): only its differences count.
   */
  record(latencyMs: number, now: number): void {
    if (!(latencyMs >= 0)) return;
    if (this.samples === 0) {
      this.ewmaMs = latencyMs;
      this.peakMs = latencyMs;
    } else {
      const weight = Math.exp(-Math.max(0, now - this.#at) / this.#decayMs);
      this.ewmaMs = this.ewmaMs * weight + latencyMs * (1 - weight);
      this.peakMs = latencyMs > this.peakMs ? latencyMs : this.peakMs * weight + latencyMs * (1 - weight);
    }
    this.#at = now;
    this.#recent[this.samples % WINDOW] = latencyMs;
    this.samples += 1;
    this.#sorted = undefined;
  }

  /** The p-th percentile of the recent answers' latencies; undefined before `minSamples` answers. */
  percentile(p: number, minSamples = 20): number | undefined {
    if (this.samples < minSamples) return undefined;
    this.#sorted ??= Array.from(this.#recent.subarray(0, Math.min(this.samples, WINDOW))).sort(
      (a, b) => a - b,
    );
    const sorted = this.#sorted;
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  }
}

/** Models tracked per target: past this, the least recently added one is forgotten (bounded). */
const MODELS_PER_TARGET = 1_024;

/** Load figures per target and model: a Triton target serves many models at different speeds. */
export class LoadBook {
  readonly #byTarget = new Map<string, Map<string, LoadStats>>();
  readonly #totals = new Map<string, { inFlight: number }>();
  readonly #decayMs: number;

  constructor(decayMs: number) {
    this.#decayMs = decayMs;
  }

  /** The figures of `target` serving `model` ('' when the router's targets each serve one model). */
  get(target: string, model = ''): LoadStats {
    let models = this.#byTarget.get(target);
    let total = this.#totals.get(target);
    if (models === undefined || total === undefined) {
      models = new Map();
      total = { inFlight: 0 };
      this.#byTarget.set(target, models);
      this.#totals.set(target, total);
    }
    let stats = models.get(model);
    if (stats === undefined) {
      stats = new LoadStats(this.#decayMs, total);
      if (models.size >= MODELS_PER_TARGET) {
        const oldest = models.keys().next();
        if (oldest.done !== true) models.delete(oldest.value);
      }
      models.set(model, stats);
    }
    return stats;
  }

  /** Calls in flight to `target`, all models together. */
  inFlight(target: string): number {
    return this.#totals.get(target)?.inFlight ?? 0;
  }
}
