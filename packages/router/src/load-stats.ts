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

/**
 * One target's figures: its count over all models, its models' figures, and the model asked for
 * last (a target mostly serves the same model call after call: found without a map lookup).
 */
interface TargetLoad {
  inFlight: number;
  readonly models: Map<string, LoadStats>;
  lastModel: string | undefined;
  last: LoadStats | undefined;
}

/** Load figures per target and model: a Triton target serves many models at different speeds. */
export class LoadBook {
  // One map, one entry per target: a call touches one entry, not a map of totals beside a map of models.
  readonly #byTarget = new Map<string, TargetLoad>();
  readonly #decayMs: number;

  constructor(decayMs: number) {
    this.#decayMs = decayMs;
  }

  /** The figures of `target` serving `model` ('' when the router's targets each serve one model). */
  get(target: string, model = ''): LoadStats {
    let entry = this.#byTarget.get(target);
    if (entry === undefined) {
      entry = { inFlight: 0, models: new Map(), lastModel: undefined, last: undefined };
      this.#byTarget.set(target, entry);
    } else if (entry.lastModel === model && entry.last !== undefined) return entry.last;
    const models = entry.models;
    let stats = models.get(model);
    if (stats === undefined) {
      stats = new LoadStats(this.#decayMs, entry);
      if (models.size >= MODELS_PER_TARGET) {
        const oldest = models.keys().next();
        if (oldest.done !== true) models.delete(oldest.value);
      }
      models.set(model, stats);
    }
    entry.lastModel = model;
    entry.last = stats;
    return stats;
  }

  /** Calls in flight to `target`, all models together. */
  inFlight(target: string): number {
    return this.#byTarget.get(target)?.inFlight ?? 0;
  }
}
