/** What the server counted for one model. */
export interface ModelStats {
  /** ModelInfer requests that named the model (valid or not). */
  requests: number;
  /** Times `execute` ran. */
  executions: number;
  /** Requests that ended in an error status (validation, faults, model errors). */
  failures: number;
  /** Requests the client cancelled, or whose deadline passed, before the response was sent. */
  cancellations: number;
  /** Sum of the batch sizes of the executions. */
  rows: number;
  /** Largest batch size an execution saw. */
  maxBatchSize: number;
  /** Responses produced (ModelInfer: one per success; ModelStreamInfer: every response sent). */
  responses: number;
  /** Executions running right now, and the most that ever ran at once. */
  inFlight: number;
  maxInFlight: number;
}

function emptyStats(): ModelStats {
  return {
    requests: 0,
    executions: 0,
    failures: 0,
    cancellations: 0,
    rows: 0,
    maxBatchSize: 0,
    responses: 0,
    inFlight: 0,
    maxInFlight: 0,
  };
}

/** Counters per model name. */
export class StatsBook {
  readonly #stats = new Map<string, ModelStats>();

  /** The live counters for `model` (created on first use). */
  of(model: string): ModelStats {
    let stats = this.#stats.get(model);
    if (stats === undefined) {
      stats = emptyStats();
      this.#stats.set(model, stats);
    }
    return stats;
  }

  /** A copy of the counters for `model`. */
  snapshot(model: string): ModelStats {
    return { ...(this.#stats.get(model) ?? emptyStats()) };
  }

  executionStarted(model: string, rows: number): void {
    const stats = this.of(model);
    stats.executions += 1;
    stats.rows += rows;
    stats.maxBatchSize = Math.max(stats.maxBatchSize, rows);
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
  }

  executionEnded(model: string): void {
    this.of(model).inFlight -= 1;
  }

  /** Zeroes every counter; executions still running keep counting in `inFlight`. */
  reset(): void {
    for (const [model, stats] of this.#stats) {
      this.#stats.set(model, { ...emptyStats(), inFlight: stats.inFlight, maxInFlight: stats.inFlight });
    }
  }
}
