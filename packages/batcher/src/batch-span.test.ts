import { trace } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from '../../../test/unit/otel-metrics.js';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher, type MicroBatcher } from './micro-batcher.js';

let tracing: ReturnType<typeof installInMemoryTracing>;

beforeEach(() => {
  tracing = installInMemoryTracing();
});
afterEach(() => tracing.uninstall());

/** Three callers, each under its own span, through a batcher with one batch in flight. */
async function threeCallers(batcher: MicroBatcher, transport: EchoTransport): Promise<string[]> {
  const callers: string[] = [];
  const answers = [0, 1, 2].map((seed) =>
    trace.getTracer('test').startActiveSpan(`caller ${seed}`, (span) => {
      callers.push(span.spanContext().spanId);
      return batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, seed))).finally(() => span.end());
    }),
  );
  while (transport.held > 0 || batcher.stats().queued > 0) {
    transport.release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(answers);
  return callers;
}

describe('batch spans', () => {
  it('makes a batch of one its caller’s child, and a batch of several a root linked to each', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const callers = await threeCallers(batcher, transport);
    await batcher.close();
    const [alone, shared] = tracing.exporter.getFinishedSpans().filter((span) => span.name === 'batch m');
    expect(alone?.parentSpanContext?.spanId).toBe(callers[0]);
    expect(shared?.parentSpanContext).toBeUndefined();
    expect(shared?.spanContext().traceId).not.toBe(alone?.spanContext().traceId);
    expect(shared?.links.map((link) => link.context.spanId)).toEqual(callers.slice(1));
  });

  it('opens no span and records no metric with tracing: false, and stats() still counts', async () => {
    const meters: InMemoryMetrics = installInMemoryMetrics();
    try {
      const transport = new EchoTransport({ hold: true });
      const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, tracing: false });
      await threeCallers(batcher, transport);
      expect(tracing.exporter.getFinishedSpans().filter((span) => span.name === 'batch m')).toEqual([]);
      expect(await meters.points('infergate.batcher.batch.size')).toEqual([]);
      expect(batcher.stats()).toMatchObject({ batches: 2, items: 3 });
      await batcher.close();
    } finally {
      await meters.uninstall();
    }
  });

  it('records into a MeterProvider registered after the batcher was made', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const meters = installInMemoryMetrics();
    try {
      await threeCallers(batcher, transport);
      const sizes = await meters.points('infergate.batcher.batch.size');
      expect(sizes[0]?.value).toMatchObject({ count: 2, sum: 3 });
      await batcher.close();
    } finally {
      await meters.uninstall();
    }
  });
});
