import PQueue from 'p-queue';
import { FairQueue } from './fair-queue.js';
import type { PendingCall } from './pending-call.js';

/** Calls that may share a batch: same model, version, priority, tensor layout, outputs, parameters. */
export interface Bucket {
  readonly key: string;
  readonly priority: number;
  readonly queue: FairQueue<PendingCall>;
  /** Fixed policy: fires when the oldest call has waited `maxQueueDelayMs`. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Orders priorities as Triton does (1 is highest); 0 (the model's default) after every explicit one. */
function rank(priority: number): number {
  return priority === 0 ? Number.POSITIVE_INFINITY : priority;
}

/**
 * One model version's batching state: its buckets, the slots for batches in flight (a p-queue with
 * concurrency `slots`), the batch cap and an estimate of a batch's service time.
 */
export class Lane {
  readonly model: string;
  readonly version: string;
  /** Most rows per batch: min(batcher maxBatchSize, model max_batch_size). */
  readonly cap: number;
  readonly slots: number;
  readonly sender: PQueue;
  readonly buckets = new Map<string, Bucket>();
  inFlight = 0;
  #serviceMs = 0;
  #samples = 0;

  constructor(model: string, version: string, cap: number, slots: number) {
    this.model = model;
    this.version = version;
    this.cap = cap;
    this.slots = slots;
    this.sender = new PQueue({ concurrency: slots });
  }

  bucket(key: string, priority: number, weightOf: (tenant: string) => number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { key, priority, queue: new FairQueue(weightOf), timer: undefined };
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

  /** Drops a bucket that has emptied, with its timer. */
  prune(bucket: Bucket): void {
    if (bucket.queue.size > 0) return;
    if (bucket.timer !== undefined) clearTimeout(bucket.timer);
    bucket.timer = undefined;
    this.buckets.delete(bucket.key);
  }

  /** Learns how long a batch takes, end to end (exponentially weighted). */
  observeService(ms: number): void {
    this.#serviceMs = this.#samples === 0 ? ms : this.#serviceMs * 0.8 + ms * 0.2;
    this.#samples += 1;
  }

  /** The expected time a batch takes, once a few have been measured; 0 before. */
  get expectedServiceMs(): number {
    return this.#samples >= 3 ? this.#serviceMs : 0;
  }
}
