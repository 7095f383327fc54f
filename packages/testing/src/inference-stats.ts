/** A count and a cumulative duration, as Triton's StatisticDuration. */
export interface StatDuration {
  count: number;
  ns: bigint;
}

/** Measured phases of one request (ns). */
export interface RequestTiming {
  batchSize: number;
  queueNs: bigint;
  computeInputNs: bigint;
  computeInferNs: bigint;
  computeOutputNs: bigint;
  totalNs: bigint;
}

/** Triton's per-response statistics of decoupled models, keyed by the response index. */
export interface ResponseStats {
  computeInfer: StatDuration;
  computeOutput: StatDuration;
  success: StatDuration;
  fail: StatDuration;
  emptyResponse: StatDuration;
  cancel: StatDuration;
}

/** Statistics of one model version, shaped like inference.ModelStatistics. */
export interface VersionStats {
  name: string;
  version: string;
  /** ms since the epoch of the last request (0 = never). */
  lastInference: number;
  /** Rows inferred (a batch of 4 counts 4). */
  inferenceCount: number;
  /** Executions of the model. */
  executionCount: number;
  success: StatDuration;
  fail: StatDuration;
  queue: StatDuration;
  computeInput: StatDuration;
  computeInfer: StatDuration;
  computeOutput: StatDuration;
  /** Per batch size: compute_input, compute_infer, compute_output. */
  batchStats: Map<
    number,
    { computeInput: StatDuration; computeInfer: StatDuration; computeOutput: StatDuration }
  >;
  responseStats: Map<string, ResponseStats>;
}

const zero = (): StatDuration => ({ count: 0, ns: 0n });
const add = (duration: StatDuration, ns: bigint): void => {
  duration.count += 1;
  duration.ns += ns;
};

function emptyVersion(name: string, version: string): VersionStats {
  return {
    name,
    version,
    lastInference: 0,
    inferenceCount: 0,
    executionCount: 0,
    success: zero(),
    fail: zero(),
    queue: zero(),
    computeInput: zero(),
    computeInfer: zero(),
    computeOutput: zero(),
    batchStats: new Map(),
    responseStats: new Map(),
  };
}

function emptyResponse(): ResponseStats {
  return {
    computeInfer: zero(),
    computeOutput: zero(),
    success: zero(),
    fail: zero(),
    emptyResponse: zero(),
    cancel: zero(),
  };
}

/** Measured statistics per model version, filled by the inference pipeline (ModelStatistics). */
export class InferenceStats {
  readonly #versions = new Map<string, VersionStats>();

  of(name: string, version: string): VersionStats {
    const key = `${name}\u0000${version}`;
    let stats = this.#versions.get(key);
    if (stats === undefined) {
      stats = emptyVersion(name, version);
      this.#versions.set(key, stats);
    }
    return stats;
  }

  /** A successful request. */
  succeeded(name: string, version: string, timing: RequestTiming): void {
    const stats = this.of(name, version);
    stats.lastInference = Date.now();
    stats.inferenceCount += timing.batchSize;
    stats.executionCount += 1;
    add(stats.success, timing.totalNs);
    add(stats.queue, timing.queueNs);
    add(stats.computeInput, timing.computeInputNs);
    add(stats.computeInfer, timing.computeInferNs);
    add(stats.computeOutput, timing.computeOutputNs);
    let batch = stats.batchStats.get(timing.batchSize);
    if (batch === undefined) {
      batch = { computeInput: zero(), computeInfer: zero(), computeOutput: zero() };
      stats.batchStats.set(timing.batchSize, batch);
    }
    add(batch.computeInput, timing.computeInputNs);
    add(batch.computeInfer, timing.computeInferNs);
    add(batch.computeOutput, timing.computeOutputNs);
  }

  /** A request that failed after the model and version were resolved. */
  failed(name: string, version: string, totalNs: bigint): void {
    const stats = this.of(name, version);
    stats.lastInference = Date.now();
    add(stats.fail, totalNs);
  }

  /** One response of a decoupled model: `kind` says how it ended. */
  response(
    name: string,
    version: string,
    index: number,
    kind: 'success' | 'fail' | 'emptyResponse' | 'cancel',
    inferNs: bigint,
    outputNs: bigint,
  ): void {
    const stats = this.of(name, version);
    let entry = stats.responseStats.get(String(index));
    if (entry === undefined) {
      entry = emptyResponse();
      stats.responseStats.set(String(index), entry);
    }
    add(entry[kind], inferNs + outputNs);
    if (kind === 'success') {
      add(entry.computeInfer, inferNs);
      add(entry.computeOutput, outputNs);
    }
  }

  /** Every version with statistics, in first-seen order. */
  all(): VersionStats[] {
    return [...this.#versions.values()];
  }

  reset(): void {
    this.#versions.clear();
  }
}
