import type { InferRequest } from '@infergate/core';
import { clearLongTimer, type LongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { type BucketTemplate, batchKey, sameLayout } from './batch-key.js';
import { FairQueue } from './fair-queue.js';
import { type FillMode, FillPlanner, type ServerBatching } from './fill-planner.js';
import type { PendingCall } from './pending-call.js';

/** Calls that may share a batch: same model, version, priority, tensor layout, outputs, parameters. */
export interface Bucket {
  readonly key: string;
  readonly priority: number;
  /** Its first call's layout, to match later calls without building their key. */
  readonly template: BucketTemplate;
  readonly queue: FairQueue<PendingCall>;
  /** Fixed policy: fires when the oldest call has waited `maxQueueDelayMs`. */
  timer: LongTimer | undefined;
}

/** Orders priorities as Triton does (1 is highest); 0 (the model's default) after every explicit one. */
function rank(priority: number): number {
  return priority === 0 ? Number.POSITIVE_INFINITY : priority;
}

/**
 * One model version's batching state: its buckets, the slots for batches in flight (`inFlight` of
 * `slots`; the batcher sends only while one is free), the batch cap and the adaptive policy's
 * planner (which also learns a batch's service time).
 */
export class Lane {
  readonly model: string;
  readonly version: string;
  /** Most rows per batch: min(batcher maxBatchSize, model max_batch_size). */
  readonly cap: number;
  readonly slots: number;
  readonly buckets = new Map<string, Bucket>();
  readonly planner: FillPlanner;
  inFlight = 0;
  /**
   * The last bucket that emptied, kept for the next call of the same layout: at low load every
   * batch empties its bucket, and the next call would otherwise build a key and a queue again.
   */
  #spare: Bucket | undefined;
  /** Adaptive policy: re-decides a held batch when its wait is up. */
  #hold: { at: number; timer: LongTimer | undefined } | undefined;
  /** Adaptive policy: re-decides a batch at the end of this turn of the event loop. */
  #turnEnd: ReturnType<typeof setImmediate> | undefined;
  /** True while the end-of-turn decision runs (the batch then goes). */
  turnEnded = false;
  /** When the server's statistics were last asked for (measure rule), ms. */
  statsAskedAt = Number.NEGATIVE_INFINITY;
  statsPending = false;
  /** The server's cumulative counters at the last sample. */
  statsBase: { requests: number; executions: number; queueUs: number; computeUs: number } | undefined;

  constructor(
    model: string,
    version: string,
    cap: number,
    slots: number,
    planner: { maxQueueDelayMs: number; server: ServerBatching | undefined; mode: FillMode },
  ) {
    this.model = model;
    this.version = version;
    this.cap = cap;
    this.slots = slots;
    this.planner = new FillPlanner(cap, planner.maxQueueDelayMs, planner.server, planner.mode);
  }

  /**
   * Calls `wake` at `at` (ms, performance.now() clock) unless an earlier wake is already set; at the
   * end of this turn of the event loop (`setImmediate`, after every call queued in this turn) when
   * `at` is not after `now`. `turnEnded` is true while that end-of-turn wake runs.
   */
  holdUntil(at: number, now: number, wake: () => void): void {
    if (at <= now) {
      this.#turnEnd ??= setImmediate(() => {
        this.#turnEnd = undefined;
        this.turnEnded = true;
        try {
          wake();
        } finally {
          this.turnEnded = false;
        }
      });
      return;
    }
    if (this.#hold !== undefined && this.#hold.at <= at) return;
    this.clearHold();
    const timer = setLongTimeout(
      () => {
        this.#hold = undefined;
        wake();
      },
      Math.max(0, at - now),
    );
    this.#hold = { at, timer };
  }

  /** Whether a decision is due at the end of this turn of the event loop. */
  get decidingAtTurnEnd(): boolean {
    return this.#turnEnd !== undefined;
  }

  clearHold(): void {
    if (this.#hold !== undefined) clearLongTimer(this.#hold.timer);
    this.#hold = undefined;
    if (this.#turnEnd !== undefined) clearImmediate(this.#turnEnd);
    this.#turnEnd = undefined;
  }

  /** The bucket for a call, made when none matches (by layout first, then by key). */
  bucket(
    request: InferRequest,
    priority: number,
    headers: Readonly<Record<string, string>> | undefined,
    weightOf: (tenant: string) => number,
  ): Bucket {
    for (const bucket of this.buckets.values()) {
      const same = sameLayout(bucket.template, request, priority, headers);
      if (same === true) return bucket;
      if (same === undefined) break;
    }
    const spare = this.#spare;
    if (spare !== undefined && sameLayout(spare.template, request, priority, headers) === true) {
      this.#spare = undefined;
      // A live bucket with the same key (its template had empty parameters) takes precedence.
      const live = this.buckets.get(spare.key);
      if (live !== undefined) return live;
      this.buckets.set(spare.key, spare);
      return spare;
    }
    const key = batchKey(request, priority, headers);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = {
        key,
        priority,
        template: { request, priority, headers },
        queue: new FairQueue(weightOf),
        timer: undefined,
      };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /**
   * The bucket to send from next, if any is ready: with `waitForDelay` (fixed policy) only full
   * buckets or those whose oldest call has waited `delayMs`. Higher priority first, then the oldest.
   */
  next(now: number, waitForDelay: boolean, delayMs: number): Bucket | undefined {
    let best: Bucket | undefined;
    let bestOldest = 0;
    for (const bucket of this.buckets.values()) {
      const oldest = bucket.queue.oldest();
      if (oldest === undefined) continue;
      if (waitForDelay && bucket.queue.rows < this.cap && now - oldest.enqueuedAt < delayMs) continue;
      if (
        best === undefined ||
        rank(bucket.priority) < rank(best.priority) ||
        (rank(bucket.priority) === rank(best.priority) && oldest.enqueuedAt < bestOldest)
      ) {
        best = bucket;
        bestOldest = oldest.enqueuedAt;
      }
    }
    return best;
  }

  /**
   * How long a call queued now may wait, for admission by `maxQueueWaitMs`: one slot frees every
   * round trip ÷ slots, and the rows ahead fill `cap`-row batches. The round trip is a high one
   * (`FillPlanner.serviceHighMs`: the learned mean plus four mean deviations, or the 99th percentile
   * of the last 256 round trips when that is longer), so a machine whose batches vary (a loaded
   * client, a shared server, GC pauses) admits fewer calls rather than breaking its promise. A call that
   * must wait at all also gets that margin once more for its own batch, whose round trip varies as
   * much: the promise is an answer within `maxQueueWaitMs` plus one typical round trip, so the wait
   * and the variance of the call's own round trip share `maxQueueWaitMs`. 0 when the call would be
   * sent at once (refusing it would not answer anyone sooner), and until the round trip is known.
   */
  expectedWaitMs(): number {
    const high = this.planner.serviceHighMs;
    if (high === 0) return 0;
    const busy = this.inFlight < this.slots ? 0 : 1;
    let rowsAhead = 0;
    for (const bucket of this.buckets.values()) rowsAhead += bucket.queue.rows;
    const intervals = Math.floor(rowsAhead / this.cap) + busy;
    if (intervals === 0) return 0;
    return (intervals * high) / this.slots + (high - this.planner.serviceMs);
  }

  /** Drops a bucket that has emptied, with its timer (kept as the spare for the next call). */
  prune(bucket: Bucket): void {
    if (bucket.queue.size > 0) return;
    if (bucket.timer !== undefined) clearLongTimer(bucket.timer);
    bucket.timer = undefined;
    if (this.buckets.get(bucket.key) !== bucket) return;
    this.buckets.delete(bucket.key);
    this.#spare = bucket;
  }

  /** The expected time a batch takes, once a few have been measured; 0 before. */
  get expectedServiceMs(): number {
    return this.planner.serviceMs;
  }
}
