import { type ModelStatistics, parseOptions } from '@infergate/core';
import { clearLongTimer, type LongTimer, setLongInterval } from '@infergate/core/internal/long-timer';
import { z } from 'zod';
import { functionSchema } from './internal/tracker-schema.js';

/** What the meter needs of a client: `TritonClient.modelStatistics`. */
export interface StatisticsSource {
  modelStatistics(model?: string): Promise<ModelStatistics[]>;
}

const meterOptionsSchema = z.strictObject({
  source: z.custom<StatisticsSource>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as StatisticsSource).modelStatistics === 'function',
    'source must have modelStatistics() (a TritonClient)',
  ),
  model: z.string().min(1),
  clock: functionSchema('clock').optional(),
});

export interface ComputeSample {
  /** compute_infer ns accumulated since the previous sample. */
  computeNs: bigint;
  /** Rows inferred since the previous sample (a batch of 8 counts 8). */
  rows: number;
  executions: number;
  /** computeNs ÷ rows: what one row cost in the latest interval; undefined until rows > 0. */
  nsPerRow: number | undefined;
  at: number;
}

/**
 * Polls Triton's model statistics and turns the cumulative compute_infer time into per-row cost for
 * the last interval. Every row of an execution is charged the same share, which is exactly the
 * "divide by the rows of the batch" rule, without needing per-request data from the server.
 */
export class ComputeMeter {
  readonly model: string;
  readonly #source: StatisticsSource;
  readonly #clock: () => number;
  #previous: { computeNs: bigint; rows: number; executions: number } | undefined;
  #latest: ComputeSample | undefined;
  #timer: LongTimer | undefined;

  constructor(options: { source: StatisticsSource; model: string; clock?: () => number }) {
    parseOptions(meterOptionsSchema, options, 'compute meter options');
    this.model = options.model;
    this.#source = options.source;
    this.#clock = options.clock ?? Date.now;
  }

  /** The latest interval with rows in it, if any. */
  get latest(): ComputeSample | undefined {
    return this.#latest;
  }

  /** Reads the statistics once; the first call only sets the baseline. */
  async sample(): Promise<ComputeSample | undefined> {
    const stats = await this.#source.modelStatistics(this.model);
    let computeNs = 0n;
    let rows = 0;
    let executions = 0;
    for (const version of stats) {
      if (version.name !== this.model) continue;
      computeNs += version.inference.computeInfer.ns;
      rows += version.inferenceCount;
      executions += version.executionCount;
    }
    const previous = this.#previous;
    this.#previous = { computeNs, rows, executions };
    if (!previous || rows < previous.rows) return undefined; // first read, or the server restarted
    const deltaRows = rows - previous.rows;
    const deltaNs = computeNs - previous.computeNs;
    if (deltaRows === 0) return this.#latest;
    this.#latest = {
      computeNs: deltaNs,
      rows: deltaRows,
      executions: executions - previous.executions,
      nsPerRow: Number(deltaNs) / deltaRows,
      at: this.#clock(),
    };
    return this.#latest;
  }

  /** Samples every `intervalMs` in the background (the timer does not keep the process alive). */
  start(intervalMs = 10_000): this {
    this.stop();
    void this.sample().catch(() => undefined);
    // Any period: over 2^31 − 1 ms a plain interval would sample every millisecond.
    this.#timer = setLongInterval(() => void this.sample().catch(() => undefined), intervalMs);
    this.#timer?.unref?.();
    return this;
  }

  stop(): void {
    clearLongTimer(this.#timer);
    this.#timer = undefined;
  }
}
