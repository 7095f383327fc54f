import {
  type Attributes,
  type Counter,
  type Histogram,
  type Link,
  metrics,
  type ObservableGauge,
  type ObservableResult,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type Tracer,
  trace,
  type UpDownCounter,
} from '@opentelemetry/api';
import type { MicroBatcherStats } from '../stats.js';

const SCOPE = '@infergate/batcher';

/**
 * The batcher's OpenTelemetry instruments and the plain counters behind `stats()`. With no SDK
 * registered every instrument is the API's no-op.
 */
export class BatcherTelemetry {
  readonly #tracer: Tracer = trace.getTracer(SCOPE);
  readonly #queueDepth: ObservableGauge;
  readonly #inFlight: UpDownCounter;
  readonly #batchRows: Histogram;
  readonly #queueWait: Histogram;
  readonly #rejections: Counter;
  readonly #observe: (result: ObservableResult) => void;
  readonly #counters = {
    batches: 0,
    items: 0,
    rows: 0,
    rpcs: 0,
    passedThrough: 0,
    inFlight: 0,
    rejections: {} as Record<string, number>,
  };

  constructor(queued: () => { items: number; bytes: number }) {
    const meter = metrics.getMeter(SCOPE);
    this.#queueDepth = meter.createObservableGauge('infergate.batcher.queue.depth', {
      description: 'Calls waiting in the batcher queue',
      unit: '{call}',
    });
    this.#observe = (result) => result.observe(queued().items);
    this.#queueDepth.addCallback(this.#observe);
    this.#inFlight = meter.createUpDownCounter('infergate.batcher.batches.in_flight', {
      description: 'Batches sent and not yet answered',
      unit: '{batch}',
    });
    this.#batchRows = meter.createHistogram('infergate.batcher.batch.size', {
      description: 'Rows per batch sent',
      unit: '{row}',
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256] },
    });
    this.#queueWait = meter.createHistogram('infergate.batcher.queue.wait', {
      description: 'Time calls waited in the batcher queue before their batch was sent',
      unit: 'ms',
    });
    this.#rejections = meter.createCounter('infergate.batcher.rejections', {
      description: 'Calls the batcher failed, by reason (error code)',
      unit: '{call}',
    });
  }

  /**
   * The span of one batch, linked to every member's span. A batch of one member is that member's
   * child; a batch of several is a root of its own: a flush runs in whatever context its timer or
   * trigger captured, and making the batch a child of that one member would file the other
   * members' work under a stranger's trace.
   */
  startBatchSpan(model: string, links: Link[], items: number, rows: number): Span {
    const only = links.length === 1 ? links[0] : undefined;
    return this.#tracer.startSpan(
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

  batchSent(model: string, items: number, rows: number): void {
    const counters = this.#counters;
    counters.batches += 1;
    counters.items += items;
    counters.rows += rows;
    counters.inFlight += 1;
    this.#inFlight.add(1, { 'infergate.model': model });
    this.#batchRows.record(rows, { 'infergate.model': model });
  }

  batchDone(model: string): void {
    this.#counters.inFlight -= 1;
    this.#inFlight.add(-1, { 'infergate.model': model });
  }

  rpcSent(): void {
    this.#counters.rpcs += 1;
  }

  passedThrough(): void {
    this.#counters.passedThrough += 1;
  }

  queueWait(model: string, waitedMs: number): void {
    this.#queueWait.record(waitedMs, { 'infergate.model': model });
  }

  rejected(reason: string, model: string): void {
    const rejections = this.#counters.rejections;
    rejections[reason] = (rejections[reason] ?? 0) + 1;
    const attributes: Attributes = { 'infergate.model': model, reason };
    this.#rejections.add(1, attributes);
  }

  snapshot(queued: { items: number; bytes: number }): MicroBatcherStats {
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
    this.#queueDepth.removeCallback(this.#observe);
  }
}
