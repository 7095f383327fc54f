import { createLiveGauge, lazyInstruments, sdkTracer } from '@infergate/core';
import { loadOtel, NON_RECORDING_SPAN, otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes, Link, ObservableResult, Span, SpanContext } from '@opentelemetry/api';
import type { MicroBatcherStats } from '../stats.js';
import { VERSION } from '../version.js';

const SCOPE = '@infergate/batcher';

/** The span that records nothing: what is handed out with tracing off or nothing registered. */
const OFF = NON_RECORDING_SPAN;

// Batchers whose queue depth the gauge reports; a batcher leaves on close().
const live = new Set<BatcherTelemetry>();

// Rebuilt when the application registers its MeterProvider, even after the batcher was made.
const registeredInstruments = lazyInstruments(SCOPE, VERSION, (meter) => {
  createLiveGauge(
    meter,
    'infergate.batcher.queue.depth',
    { description: 'Calls waiting in the batcher queue', unit: '{call}' },
    live,
  );
  return {
    inFlight: meter.createUpDownCounter('infergate.batcher.batches.in_flight', {
      description: 'Batches sent and not yet answered',
      unit: '{batch}',
    }),
    batchRows: meter.createHistogram('infergate.batcher.batch.size', {
      description: 'Rows per batch sent',
      unit: '{row}',
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256] },
    }),
    queueWait: meter.createHistogram('infergate.batcher.queue.wait', {
      description: 'Time calls waited in the batcher queue before their batch was sent',
      unit: 's',
      advice: {
        explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      },
    }),
    rejections: meter.createCounter('infergate.batcher.rejections', {
      description: 'Calls the batcher failed, by reason (error code)',
      unit: '{call}',
    }),
  };
});

/** What a batch sent was counted in flight on (see `BatcherTelemetry.batchSent`). */
export type InFlightCount = Pick<NonNullable<ReturnType<typeof registeredInstruments>>, 'inFlight'>;

/**
 * The batcher's instruments, or `undefined` while no MeterProvider is registered. While nothing at
 * all is registered with the OpenTelemetry API this answers without loading it.
 */
function instruments() {
  return otelRegistered() ? registeredInstruments() : undefined;
}

/**
 * The batcher's OpenTelemetry spans and instruments and the plain counters behind `stats()`. With
 * no SDK registered nothing is recorded, and while nothing at all is registered with the API it is
 * not even loaded; with `tracing: false` only the counters behind `stats()` run.
 */
export class BatcherTelemetry {
  readonly #enabled: boolean;
  readonly #queued: () => { items: number; bytes: number };
  readonly #counters = {
    batches: 0,
    items: 0,
    rows: 0,
    rpcs: 0,
    passedThrough: 0,
    inFlight: 0,
    rejections: {} as Record<string, number>,
  };

  constructor(queued: () => { items: number; bytes: number }, enabled = true) {
    this.#queued = queued;
    this.#enabled = enabled;
    if (enabled) {
      live.add(this);
      instruments();
    }
  }

  /**
   * The span active where a call was made, to link the batch's span to: only with tracing on and
   * something registered with the OpenTelemetry API (no context manager, no active span).
   */
  callerSpanContext(): SpanContext | undefined {
    if (!this.#enabled || !otelRegistered()) return undefined;
    return loadOtel().trace.getActiveSpan()?.spanContext();
  }

  /** Runs a batch's sends with its span active (directly, for the span that records nothing). */
  inBatch<R>(span: Span, run: () => Promise<R>): Promise<R> {
    if (span === OFF) return run();
    const { context, trace } = loadOtel();
    return context.with(trace.setSpan(context.active(), span), run);
  }

  /** Marks a batch's span failed. */
  batchFailed(span: Span, message?: string): void {
    if (span === OFF) return;
    const code = loadOtel().SpanStatusCode.ERROR;
    span.setStatus(message === undefined ? { code } : { code, message });
  }

  /** Whether spans and metrics are on (the caller's span is linked only then). */
  get enabled(): boolean {
    return this.#enabled;
  }

  observe(result: ObservableResult): void {
    result.observe(this.#queued().items);
  }

  /**
   * The span of one batch, linked to every member's span. A batch of one member is that member's
   * child; a batch of several is a root of its own: a flush runs in whatever context its timer or
   * trigger captured, and making the batch a child of that one member would file the other
   * members' work under a stranger's trace.
   */
  startBatchSpan(model: string, links: Link[], items: number, rows: number): Span {
    const tracer = this.#enabled && otelRegistered() ? sdkTracer(SCOPE, VERSION) : undefined;
    if (tracer === undefined) return OFF;
    const { ROOT_CONTEXT, SpanKind, trace } = loadOtel();
    // By members, not links: a member with no active span (or queued before an SDK registered)
    // brings no link, and the batch is still not the one traced member's to file.
    const only = items === 1 && links.length === 1 ? links[0] : undefined;
    return tracer.startSpan(
      `batch ${model}`,
      {
        kind: SpanKind.INTERNAL,
        links,
        attributes: {
          'infergate.model': model,
          'infergate.batch.items': items,
          'infergate.batch.rows': rows,
        },
        root: only === undefined,
      },
      only === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, only.context),
    );
  }

  /**
   * Counts a batch sent. Returns the instruments it was counted in flight on (undefined when none),
   * for `batchDone` to count it down on the same ones: a batch sent before the application
   * registered (or replaced) its MeterProvider must not take one off the new provider's count.
   */
  batchSent(model: string, items: number, rows: number): InFlightCount | undefined {
    const counters = this.#counters;
    counters.batches += 1;
    counters.items += items;
    counters.rows += rows;
    counters.inFlight += 1;
    const recording = this.#enabled ? instruments() : undefined;
    if (recording === undefined) return undefined;
    recording.inFlight.add(1, { 'infergate.model': model });
    recording.batchRows.record(rows, { 'infergate.model': model });
    return recording;
  }

  /** Counts a batch answered, on the instruments `batchSent` counted it on. */
  batchDone(model: string, counted: InFlightCount | undefined): void {
    this.#counters.inFlight -= 1;
    counted?.inFlight.add(-1, { 'infergate.model': model });
  }

  rpcSent(): void {
    this.#counters.rpcs += 1;
  }

  passedThrough(): void {
    this.#counters.passedThrough += 1;
  }

  /** Records how long each call of a batch sent at `at` waited (nothing without a MeterProvider). */
  queueWaits(model: string, calls: readonly { enqueuedAt: number }[], at: number): void {
    const recording = this.#enabled ? instruments() : undefined;
    if (recording === undefined) return;
    const attributes = { 'infergate.model': model };
    for (const call of calls) recording.queueWait.record((at - call.enqueuedAt) / 1000, attributes);
  }

  rejected(reason: string, model: string): void {
    const rejections = this.#counters.rejections;
    rejections[reason] = (rejections[reason] ?? 0) + 1;
    const recording = this.#enabled ? instruments() : undefined;
    if (recording === undefined) return;
    const attributes: Attributes = { 'infergate.model': model, reason };
    recording.rejections.add(1, attributes);
  }

  snapshot(queued: { items: number; bytes: number }): Omit<MicroBatcherStats, 'lanes'> {
    const counters = this.#counters;
    return {
      queued: queued.items,
      queuedBytes: queued.bytes,
      inFlight: counters.inFlight,
      batches: counters.batches,
      items: counters.items,
      rows: counters.rows,
      rpcs: counters.rpcs,
      passedThrough: counters.passedThrough,
      rejections: { ...counters.rejections },
      meanBatchSize: counters.batches === 0 ? 0 : counters.rows / counters.batches,
    };
  }

  close(): void {
    live.delete(this);
  }
}
