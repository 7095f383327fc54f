import { metrics, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

function points(collected: ResourceMetrics, name: string) {
  for (const scope of collected.scopeMetrics) {
    for (const metric of scope.metrics) if (metric.descriptor.name === name) return metric.dataPoints;
  }
  return [];
}

describe('telemetry', () => {
  let reader: TestReader;
  let tracing: ReturnType<typeof installInMemoryTracing>;

  beforeEach(() => {
    reader = new TestReader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    tracing = installInMemoryTracing();
  });

  afterEach(() => {
    metrics.disable();
    tracing.uninstall();
  });

  it('records batch size, queue wait, in-flight, queue depth and rejections', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, maxQueueSize: 2 });
    const answers = [0, 1, 2].map((seed) => batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, seed))));
    await expect(batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, 9)))).rejects.toMatchObject({
      code: 'QUEUE_FULL',
    });
    const during = (await reader.collect()).resourceMetrics;
    expect(points(during, 'infergate.batcher.queue.depth')[0]?.value).toBe(2);
    expect(points(during, 'infergate.batcher.batches.in_flight')[0]?.value).toBe(1);
    while (transport.held > 0 || batcher.stats().queued > 0) {
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    const after = (await reader.collect()).resourceMetrics;
    const sizes = points(after, 'infergate.batcher.batch.size')[0]?.value as { count: number; sum: number };
    expect(sizes).toMatchObject({ count: 2, sum: 3 });
    expect(points(after, 'infergate.batcher.queue.wait')[0]?.value).toMatchObject({ count: 3 });
    const wait = after.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === 'infergate.batcher.queue.wait');
    expect(wait?.descriptor.unit).toBe('s'); // OpenTelemetry's unit for durations
    const rejections = points(after, 'infergate.batcher.rejections');
    expect(rejections[0]).toMatchObject({
      value: 1,
      attributes: { reason: 'QUEUE_FULL', 'infergate.model': 'm' },
    });
    expect(batcher.stats()).toMatchObject({
      batches: 2,
      items: 3,
      meanBatchSize: 1.5,
      rejections: { QUEUE_FULL: 1 },
    });
    await batcher.close();
  });

  it("opens a 'batch <model>' span linked to each member's span", async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const tracer = trace.getTracer('test');
    const callers: string[] = [];
    const answers = [0, 1, 2].map((seed) =>
      tracer.startActiveSpan(`caller ${seed}`, (span) => {
        callers.push(span.spanContext().spanId);
        return batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, seed))).finally(() => span.end());
      }),
    );
    while (transport.held > 0 || batcher.stats().queued > 0) {
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    await batcher.close();
    const batches = tracing.exporter.getFinishedSpans().filter((span) => span.name === 'batch m');
    expect(batches).toHaveLength(2);
    expect(batches[1]?.links.map((link) => link.context.spanId)).toEqual(callers.slice(1));
    expect(batches[1]?.attributes).toMatchObject({ 'infergate.batch.items': 2, 'infergate.batch.rows': 2 });
  });
});
