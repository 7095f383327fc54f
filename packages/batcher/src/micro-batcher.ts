import {
  abortError,
  assertSafeHeaders,
  type CallOptions,
  checkTimeoutMs,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
} from '@infergate/core';
import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { isPlainObject } from '@infergate/core/internal/option-checks';
import { sendBatch } from './internal/batch-dispatch.js';
import { type BatchShape, batchShape } from './internal/batch-key.js';
import { batcherErrors } from './internal/batcher-errors.js';
import { failLostBatches, watchCallsLost } from './internal/connection-loss.js';
import { type Bucket, Lane } from './internal/lane.js';
import { type ModelLimit, ModelLimits } from './internal/model-limits.js';
import { PendingCall } from './internal/pending-call.js';
import { requestPriority } from './internal/priority.js';
import { sampleServer, statisticsOf } from './internal/server-sampler.js';
import { BatcherTelemetry } from './internal/telemetry.js';
import {
  type GetModelStatistics,
  type MicroBatcherOptions,
  type ResolvedMicroBatcherOptions,
  resolveMicroBatcherOptions,
} from './options.js';
import type { LaneStats, MicroBatcherStats } from './stats.js';

export interface CloseOptions {
  /** Send every queued call (without waiting for the delay) instead of failing it. @default false */
  drain?: boolean;
}

const now = () => performance.now();

/** The options of a call made without any (shared, never written). */
const NO_OPTIONS: CallOptions = Object.freeze({});

/**
 * A client-side micro-batcher that is itself an `InferTransport`: concurrent `infer` calls that can
 * share a batch are concatenated along the batch dimension, sent as one request to the inner
 * transport, and the response rows are split back to each caller. `stream` passes through.
 */
/**
 * A batch goes with its first member's headers, and members join by their headers' own string keys
 * and values: headers whose make that key cannot see (a symbol key, a Map, an array: what
 * `assertSafeHeaders` refuses besides names and values) are refused here, with its error, rather
 * than ride unseen behind another call's. Names and values are the transport's to judge: they are
 * in the key, so a call whose headers differ there is never sent with another's.
 */
function checkHeadersShape(headers: Readonly<Record<string, string>>): void {
  if (!isPlainObject(headers) || hasEnumerableSymbol(headers)) assertSafeHeaders(headers, 'call headers');
}

function hasEnumerableSymbol(value: object): boolean {
  for (const key of Object.getOwnPropertySymbols(value))
    if (Object.prototype.propertyIsEnumerable.call(value, key)) return true;
  return false;
}

export class MicroBatcher implements InferTransport {
  readonly options: ResolvedMicroBatcherOptions;
  readonly #transport: InferTransport;
  readonly #limits: ModelLimits;
  readonly #telemetry: BatcherTelemetry;
  /** Lanes by model, then version ('' for the server's choice). */
  readonly #lanes = new Map<string, Map<string, Lane>>();
  readonly #running = new Set<Promise<void>>();
  /** The batches sent and not yet answered, for the connection-loss path (`failLostBatches`). */
  readonly #inFlight = new Set<readonly PendingCall[]>();
  readonly #unwatchConnection: () => void;
  readonly #weightOf: (tenant: string) => number;
  readonly #statistics: GetModelStatistics | undefined;
  #queuedItems = 0;
  #queuedBytes = 0;
  #closed = false;
  #draining = false;
  #closing: Promise<void> | undefined;

  constructor(transport: InferTransport, options: MicroBatcherOptions = {}) {
    this.options = resolveMicroBatcherOptions(options);
    this.#transport = transport;
    const { tenants, models, getModelConfig, client } = this.options;
    this.#limits = new ModelLimits(models, getModelConfig, client);
    this.#weightOf = (tenant) => tenants[tenant]?.weight ?? 1;
    this.#statistics = this.options.getModelStatistics ?? statisticsOf(client);
    this.#telemetry = new BatcherTelemetry(
      () => ({ items: this.#queuedItems, bytes: this.#queuedBytes }),
      this.options.tracing,
    );
    this.#unwatchConnection = watchCallsLost(transport, () => this.#failInFlight());
  }

  /** The transport's connection closed under its calls: the batches in flight there have failed. */
  #failInFlight(): void {
    failLostBatches(this.#inFlight);
  }

  infer(request: InferRequest, callOptions?: CallOptions): Promise<InferResponse> {
    const options = callOptions ?? NO_OPTIONS;
    try {
      if (this.#closed) throw batcherErrors.closed();
      if (options.signal?.aborted) throw abortError(options.signal, { model: request.model });
      checkTimeoutMs(options.timeoutMs);
      const priority = requestPriority(request, options, this.options.priorityLevels);
      const call = batchShape(request);
      if (call === undefined) return this.#passThrough(request, options);
      if (options.headers !== undefined) checkHeadersShape(options.headers);
      const version = request.modelVersion ?? '';
      const limit = this.#limits.peek(request.model, version);
      if (limit !== null) return this.#route(request, options, call, priority, limit);
      return this.#limits
        .resolve(request.model, version)
        .then((resolved) =>
          resolved === null
            ? this.#passThrough(request, options)
            : this.#route(request, options, call, priority, resolved),
        );
    } catch (error) {
      return Promise.reject(this.#rejected(InfergateError.from(error), request.model));
    }
  }

  /** Streaming calls are not batched: they go straight to the inner transport. */
  async *stream(request: InferRequest, options: CallOptions = {}): AsyncIterable<InferResponse> {
    if (this.#closed) throw batcherErrors.closed();
    this.#telemetry.passedThrough();
    yield* this.#transport.stream(request, options);
  }

  /** Counters for tests, demos and logs. */
  stats(): MicroBatcherStats {
    // Object.fromEntries defines an own entry per lane: a plain assignment under a model named
    // `__proto__` replaced the record's prototype instead (and Object.keys and JSON lost the lane).
    const entries: [string, LaneStats][] = [];
    for (const lane of this.#allLanes()) {
      const { planner } = lane;
      entries.push([
        lane.version === '' ? lane.model : `${lane.model}:${lane.version}`,
        {
          mode: planner.mode,
          server: planner.verdict,
          serviceMs: planner.serviceMs,
          serviceHighMs: planner.serviceHighMs,
          returnShare: planner.returnShare,
        },
      ]);
    }
    const lanes: Record<string, LaneStats> = Object.fromEntries(entries);
    return { ...this.#telemetry.snapshot({ items: this.#queuedItems, bytes: this.#queuedBytes }), lanes };
  }

  /**
   * Stops accepting calls. Queued calls fail with CANCELLED, or with `drain: true` are sent at once;
   * resolves when every batch in flight has been answered and no timer is left. The inner transport
   * is not closed (the batcher does not own it). Idempotent.
   */
  close(options: CloseOptions = {}): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    this.#closed = true;
    this.#unwatchConnection();
    this.#closing = this.#shutdown(options.drain === true);
    return this.#closing;
  }

  async #shutdown(drain: boolean): Promise<void> {
    if (drain) {
      this.#draining = true;
      while (this.#queuedItems > 0 || this.#running.size > 0) {
        for (const lane of this.#allLanes()) this.#pump(lane);
        await Promise.allSettled([...this.#running]);
      }
    } else {
      for (const lane of this.#allLanes()) {
        lane.clearHold();
        for (const bucket of [...lane.buckets.values()]) {
          for (const call of bucket.queue.drain()) {
            this.#unqueue(call);
            const { model } = call.request;
            call.fail(this.#rejected(batcherErrors.closedWhileQueued(model), model));
          }
          lane.prune(bucket);
        }
      }
      await Promise.allSettled([...this.#running]);
    }
    for (const lane of this.#allLanes()) lane.clearHold();
    this.#telemetry.close();
  }

  *#allLanes(): Iterable<Lane> {
    for (const versions of this.#lanes.values()) yield* versions.values();
  }

  #lane(model: string, version: string, limit: number | undefined): Lane {
    let versions = this.#lanes.get(model);
    if (versions === undefined) {
      versions = new Map();
      this.#lanes.set(model, versions);
    }
    let lane = versions.get(version);
    if (lane === undefined) {
      const cap = Math.min(this.options.maxBatchSize, limit ?? Number.POSITIVE_INFINITY);
      const server = this.#limits.serverBatching(model, version);
      const { serverBatching, maxQueueDelayMs } = this.options;
      lane = new Lane(model, version, cap, this.options.maxInFlightBatches, {
        maxQueueDelayMs,
        server,
        mode: server !== undefined && serverBatching !== 'ignore' ? 'eager' : 'fill',
      });
      versions.set(version, lane);
    }
    return lane;
  }

  #rejected(error: InfergateError, model: string): InfergateError {
    this.#telemetry.rejected(error.code, model);
    return error;
  }

  #passThrough(request: InferRequest, options: CallOptions): Promise<InferResponse> {
    this.#telemetry.passedThrough();
    return this.#transport.infer(request, options);
  }

  #route(
    request: InferRequest,
    options: CallOptions,
    call: BatchShape,
    priority: number,
    limit: ModelLimit,
  ): Promise<InferResponse> {
    if (limit === 0) return this.#passThrough(request, options);
    const { model } = request;
    if (limit !== undefined && call.rows > limit) {
      return Promise.reject(this.#rejected(batcherErrors.tooManyRows(model, call.rows, limit), model));
    }
    if (this.#closed) return Promise.reject(this.#rejected(batcherErrors.closed(), model));
    // The signal may have fired while the model's limit was being looked up.
    if (options.signal?.aborted)
      return Promise.reject(this.#rejected(abortError(options.signal, { model }), model));
    const lane = this.#lane(model, request.modelVersion ?? '', limit);
    // Admission first, before anything is allocated for the call: under overload most calls end here.
    const { maxQueueSize, maxQueueBytes, maxQueueWaitMs } = this.options;
    if (this.#queuedItems + 1 > maxQueueSize || this.#queuedBytes + call.bytes > maxQueueBytes) {
      const error = batcherErrors.queueFull(
        model,
        this.#queuedItems,
        this.#queuedBytes,
        maxQueueSize,
        maxQueueBytes,
      );
      return Promise.reject(this.#rejected(error, model));
    }
    if (maxQueueWaitMs !== undefined) {
      const waitMs = lane.expectedWaitMs();
      if (waitMs > maxQueueWaitMs) {
        return Promise.reject(
          this.#rejected(batcherErrors.waitTooLong(model, waitMs, maxQueueWaitMs), model),
        );
      }
    }
    const bucket = lane.bucket(request, priority, options.headers, this.#weightOf);
    return this.#enqueue(lane, bucket, request, options, call);
  }

  #enqueue(
    lane: Lane,
    bucket: Bucket,
    request: InferRequest,
    options: CallOptions,
    call: BatchShape,
  ): Promise<InferResponse> {
    const enqueuedAt = now();
    const { signal, timeoutMs } = options;
    const pending = new PendingCall(
      request,
      options,
      call.rows,
      call.bytes,
      enqueuedAt,
      this.#telemetry.callerSpanContext(),
    );
    const answer = pending.answer;
    if (signal !== undefined || timeoutMs !== undefined) this.#watch(lane, bucket, pending);
    bucket.queue.push(pending);
    this.#queuedItems += 1;
    this.#queuedBytes += pending.bytes;
    lane.planner.arrived(enqueuedAt, pending.rows);
    // The lane decides at the end of this turn anyway (callers of an answered batch are coming
    // back): a call that does not fill the batch leaves it to that decision, which sees it.
    if (!lane.decidingAtTurnEnd || bucket.queue.rows >= lane.cap) this.#pump(lane, enqueuedAt);
    return answer;
  }

  /** A call that can leave early: its abort listener and deadline timer, undone when it settles. */
  #watch(lane: Lane, bucket: Bucket, pending: PendingCall): void {
    const { request, options } = pending;
    const { signal, timeoutMs } = options;
    const onAbort = signal
      ? () => this.#leave(lane, bucket, pending, abortError(signal, { model: request.model }))
      : undefined;
    const timer =
      timeoutMs === undefined
        ? undefined
        : // Any length (Infinity: none), as the transports take it.
          setLongTimeout(
            () => this.#leave(lane, bucket, pending, batcherErrors.deadlinePassed(request.model, timeoutMs)),
            timeoutMs,
          );
    if (onAbort !== undefined) signal?.addEventListener('abort', onAbort, { once: true });
    pending.onSettle(() => {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      if (timer !== undefined) clearLongTimer(timer);
    });
  }

  /** A call leaves before its answer (abort or deadline): out of the queue, or its slice discarded. */
  #leave(lane: Lane, bucket: Bucket, call: PendingCall, error: InfergateError): void {
    if (call.settled) return;
    if (call.state === 'queued' && bucket.queue.remove(call)) {
      this.#unqueue(call);
      lane.prune(bucket);
    }
    call.fail(this.#rejected(error, call.request.model));
  }

  #unqueue(call: PendingCall): void {
    this.#queuedItems -= 1;
    this.#queuedBytes -= call.bytes;
  }

  /**
   * Sends ready batches while the lane has free slots; arms the fixed policy's delay timers, or the
   * adaptive policy's wake-up when it holds a batch for more rows.
   */
  #pump(lane: Lane, time?: number): void {
    const waitForDelay = this.options.flush === 'fixed' && !this.#draining;
    const plan = this.options.flush === 'adaptive' && !this.#draining;
    const delayMs = this.options.maxQueueDelayMs;
    // The caller's clock reading serves the first pass (a call just queued reads it once for both).
    let given = time;
    while (lane.inFlight < lane.slots) {
      const at = given ?? now();
      given = undefined;
      const bucket = lane.next(at, waitForDelay, delayMs);
      if (bucket === undefined) break;
      if (plan) {
        const oldest = bucket.queue.oldest() as PendingCall;
        const wakeAt = lane.planner.hold(
          at,
          bucket.queue.rows,
          oldest.enqueuedAt,
          lane.inFlight,
          lane.turnEnded,
        );
        if (wakeAt !== undefined) {
          lane.holdUntil(wakeAt, at, () => this.#pump(lane));
          break;
        }
      }
      const calls = this.#take(lane, bucket, at);
      if (calls.length > 0) this.#dispatch(lane, calls, at);
    }
    // A held batch that filled has gone: with nothing queued its wake-up would only fire (and wake
    // the process while it waits for the answer) to find an empty queue, once per batch.
    if (plan && lane.buckets.size === 0) lane.clearHold();
    if (!waitForDelay || lane.inFlight >= lane.slots) return;
    for (const bucket of lane.buckets.values()) {
      const oldest = bucket.queue.oldest();
      if (oldest === undefined || bucket.timer !== undefined) continue;
      // maxQueueDelayMs has no upper bound.
      bucket.timer = setLongTimeout(
        () => {
          bucket.timer = undefined;
          this.#pump(lane);
        },
        Math.max(0, oldest.enqueuedAt + delayMs - now()),
      );
    }
  }

  /** Takes one batch from the bucket, failing calls whose deadline the batch cannot meet. */
  #take(lane: Lane, bucket: Bucket, at: number): PendingCall[] {
    const taken = bucket.queue.take(lane.cap);
    const expected = lane.expectedServiceMs;
    const calls: PendingCall[] = [];
    for (const call of taken) {
      this.#unqueue(call);
      if (call.deadline !== undefined && call.deadline - at < expected) {
        const { model } = call.request;
        const left = call.deadline - at;
        // Already passed (its timer not run yet): the wait in this queue took it, as any deadline
        // that passes; only a call that still had time left was refused for being too close.
        const error =
          left <= 0
            ? batcherErrors.deadlinePassed(model, call.options.timeoutMs ?? 0)
            : batcherErrors.deadlineTooClose(model, left, expected);
        call.fail(this.#rejected(error, model));
      } else calls.push(call);
    }
    if (bucket.timer !== undefined) {
      clearLongTimer(bucket.timer);
      bucket.timer = undefined;
    }
    lane.prune(bucket);
    return calls;
  }

  #sampleServer(lane: Lane, at: number): void {
    const { flush, serverBatching, statsIntervalMs } = this.options;
    if (this.#statistics === undefined || flush !== 'adaptive' || serverBatching !== 'measure') return;
    if (this.#closed) return;
    const task = sampleServer(lane, at, this.#statistics, statsIntervalMs);
    if (task === undefined) return;
    this.#running.add(task);
    task.finally(() => this.#running.delete(task));
  }

  #dispatch(lane: Lane, calls: PendingCall[], at: number): void {
    let rows = 0;
    for (const call of calls) {
      call.state = 'sent';
      rows += call.rows;
    }
    this.#telemetry.queueWaits(lane.model, calls, at);
    lane.inFlight += 1;
    lane.planner.sent(rows);
    const counted = this.#telemetry.batchSent(lane.model, calls.length, rows);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      lane.inFlight -= 1;
      const done = now();
      lane.planner.answered(done, rows, done - at);
      this.#telemetry.batchDone(lane.model, counted);
      this.#sampleServer(lane, done);
      this.#pump(lane, done);
    };
    const dispatch = {
      transport: this.#transport,
      telemetry: this.#telemetry,
      maxBisectRpcs: this.options.maxBisectRpcs,
      now,
      release,
    };
    // Sent at once: `#pump` only dispatches while a slot is free, so no queue is needed in between.
    this.#inFlight.add(calls);
    const task = sendBatch(dispatch, calls)
      .catch(() => {})
      .finally(() => {
        this.#inFlight.delete(calls);
        this.#running.delete(task);
        release();
      });
    this.#running.add(task);
  }
}

/** Wraps `transport` in a micro-batcher (see `MicroBatcherOptions` for the knobs and defaults). */
export function createMicroBatcher(
  transport: InferTransport,
  options: MicroBatcherOptions = {},
): MicroBatcher {
  return new MicroBatcher(transport, options);
}
