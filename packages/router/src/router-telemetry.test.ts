import { ErrorCode, InfergateError, type InferResponse, type InferTransport } from '@infergate/core';
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { createRouter } from './infer-router.js';

class TestReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** An in-memory transport that fails while `down` is true. */
function memoryTransport(state: { down: boolean }): InferTransport {
  return {
    async infer(request) {
      if (state.down) throw new InfergateError(ErrorCode.Unavailable, 'down');
      return {
        model: request.model,
        modelVersion: '1',
        id: '',
        outputs: [],
        parameters: {},
      } satisfies InferResponse;
    },
    stream() {
      throw new Error('unused');
    },
  };
}

let tracing: ReturnType<typeof installInMemoryTracing>;
const reader = new TestReader();

beforeAll(() => {
  tracing = installInMemoryTracing();
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});

afterAll(() => {
  tracing.uninstall();
  metrics.disable();
});

describe('router telemetry', () => {
  it('records a span per attempt, breaker transitions as span events, a counter and a state gauge', async () => {
    const primary = { down: true };
    const routed = createRouter({
      name: 'telemetry-test',
      targets: [
        { name: 'primary', transport: memoryTransport(primary) },
        { name: 'fallback', transport: memoryTransport({ down: false }) },
      ],
      breaker: { volumeThreshold: 1, openMs: 60_000 },
    });
    await routed.infer({ model: 'm', inputs: [] }, {});
    const spans = tracing.exporter
      .getFinishedSpans()
      .filter((span) => span.name === 'infergate.router.attempt')
      // In attempt order: a failed attempt's span ends once the breaker's rolling window has counted
      // it, which the fallback does not wait for, so the fallback's span may end first.
      .sort((x, y) => Number(x.attributes['infergate.attempt']) - Number(y.attributes['infergate.attempt']));
    expect(spans.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'infergate.target': 'primary',
        'infergate.attempt': 1,
        'infergate.outcome': 'failure',
      }),
      expect.objectContaining({
        'infergate.target': 'fallback',
        'infergate.attempt': 2,
        'infergate.outcome': 'success',
      }),
    ]);
    expect(spans[0]?.events).toEqual([
      expect.objectContaining({
        name: 'infergate.breaker.state_change',
        attributes: expect.objectContaining({
          'infergate.breaker.from': 'closed',
          'infergate.breaker.to': 'open',
        }),
      }),
    ]);

    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const transitions = all.find(
      (metric) => metric.descriptor.name === 'infergate.router.breaker.transitions',
    );
    expect(transitions?.dataPoints).toEqual([
      expect.objectContaining({
        value: 1,
        attributes: expect.objectContaining({ 'infergate.target': 'primary' }),
      }),
    ]);
    const gauge = all.find((metric) => metric.descriptor.name === 'infergate.router.breaker.state');
    const levels = Object.fromEntries(
      (gauge?.dataPoints ?? []).map((point) => [point.attributes['infergate.target'], point.value]),
    );
    expect(levels).toEqual({ primary: 2, fallback: 0 });
    await routed.close();
  });
});
