/** The adaptive policy's state for one model (and version). */
export interface LaneStats {
  /** `fill`: batches wait for expected callers; `eager`: whatever is queued goes when a slot is free. */
  mode: 'fill' | 'eager';
  /** What the server's statistics said last (`measure` rule): `unknown` until read. */
  server: 'unknown' | 'idle' | 'saturated';
  /** Learned round trip of one batch, ms (0 until three were measured). */
  serviceMs: number;
  /**
   * The round trip admission by `maxQueueWaitMs` counts with, ms: the larger of `serviceMs` plus
   * four mean deviations and the 99th percentile of the last 256 round trips (0 until three were measured).
   */
  serviceHighMs: number;
  /** Learned share of an answered batch's rows that were sent again within one service time. */
  returnShare: number;
}

/** A snapshot of the batcher's counters (`MicroBatcher.stats()`), for tests, demos and logs. */
export interface MicroBatcherStats {
  /** Calls waiting in the queue now. */
  queued: number;
  /** Input bytes of the queued calls. */
  queuedBytes: number;
  /** Batches sent and not yet answered. */
  inFlight: number;
  /** Batches sent since creation (bisection re-sends not counted). */
  batches: number;
  /** Calls sent in those batches. */
  items: number;
  /** Rows sent in those batches. */
  rows: number;
  /** Inference RPCs made for batches, bisection re-sends included (pass-through calls not counted). */
  rpcs: number;
  /** Calls sent straight to the inner transport (unbatchable, non-batching model, `stream`). */
  passedThrough: number;
  /** Calls the batcher failed, by error code (QUEUE_FULL, DEADLINE_EXCEEDED, CANCELLED, …). */
  rejections: Readonly<Record<string, number>>;
  /** Rows per batch, on average. */
  meanBatchSize: number;
  /**
   * Per model (`model`, or `model:version` for a pinned version): the adaptive policy's state. A
   * plain object with an own entry per lane, whatever the model's name (`__proto__` included): read
   * a name with `Object.hasOwn`, as a plain object also answers `constructor`, `toString`, ….
   */
  lanes: Readonly<Record<string, LaneStats>>;
}
