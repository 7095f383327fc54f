import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { installInMemoryMetrics } from '../../../test/unit/otel-metrics.js';
import { createCostTracker } from './cost-tracker.js';

const budgets = [{ id: 'hourly', scope: ['tenant' as const], window: 'hour' as const, hardLimitUsd: 1 }];

describe('cost telemetry with an SDK registered late', () => {
  it('records from the first call after the SDK is registered, not the calls before it', async () => {
    const tracker = createCostTracker({ budgets, builtInPrices: false });
    // Calls with no SDK registered: the no-op answer must not be kept for later.
    for (let i = 0; i < 3; i++)
      await tracker.settle(await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 }), {
        costUsd: 0.125,
      });
    const meters = installInMemoryMetrics();
    const tracing = installInMemoryTracing();
    try {
      const reservation = await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 });
      expect((await meters.points('infergate.cost.reservations'))[0]?.value).toBe(1);
      const parent = trace.getTracer('test').startSpan('call');
      await context.with(trace.setSpan(context.active(), parent), () =>
        tracker.settle(reservation, { costUsd: 0.25 }),
      );
      parent.end();
      const collected = await meters.collect();
      expect(collected.get('infergate.cost.reservations')?.dataPoints[0]?.value).toBe(0);
      expect(collected.get('infergate.cost.spent')?.dataPoints.map((point) => point.value)).toEqual([0.25]);
      const [span] = tracing.exporter.getFinishedSpans();
      expect(span?.attributes).toEqual({ 'infergate.cost.usd': 0.25, 'infergate.tenant': 'acme' });
    } finally {
      await meters.uninstall();
      tracing.uninstall();
      await tracker.close();
    }
  });
});
