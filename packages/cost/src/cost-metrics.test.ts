import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { inMemoryTelemetryPerTest } from '../../../test/unit/otel-metrics.js';
import { createCostTracker } from './cost-tracker.js';

const telemetry = inMemoryTelemetryPerTest();

const budgets = [{ id: 'hourly', scope: ['tenant' as const], window: 'hour' as const, hardLimitUsd: 1 }];

describe('cost metrics', () => {
  it('records spend by model and provider without the tenant, reservations held, and budget room left', async () => {
    const tracker = createCostTracker({ budgets, builtInPrices: false });
    const acme = await tracker.reserve({ tenant: 'acme', model: 'm', provider: 'p', estimateUsd: 0.25 });
    const other = await tracker.reserve({ tenant: 'other', model: 'm', provider: 'p', estimateUsd: 0.5 });
    expect((await telemetry.meters.points('infergate.cost.reservations'))[0]?.value).toBe(2);
    const remaining = await telemetry.meters.points('infergate.cost.budget.remaining');
    // One point per budget: the tightest line (tenant "other", 1 − 0.5).
    expect(remaining.map((point) => [point.attributes, point.value])).toEqual([
      [{ 'infergate.budget': 'hourly' }, 0.5],
    ]);

    const parent = trace.getTracer('test').startSpan('call');
    await context.with(trace.setSpan(context.active(), parent), () =>
      tracker.settle(acme, { costUsd: 0.125 }),
    );
    parent.end();
    await tracker.release(other);

    const collected = await telemetry.meters.collect();
    expect(collected.get('infergate.cost.reservations')?.dataPoints[0]?.value).toBe(0);
    const spent = collected.get('infergate.cost.spent');
    expect(spent?.descriptor.unit).toBe('{USD}');
    expect(spent?.dataPoints.map((point) => [point.attributes, point.value])).toEqual([
      [{ 'gen_ai.request.model': 'm', 'gen_ai.provider.name': 'p' }, 0.125],
    ]);
    const [span] = telemetry.tracing.exporter.getFinishedSpans();
    expect(span?.attributes).toEqual({ 'infergate.cost.usd': 0.125, 'infergate.tenant': 'acme' });
    await tracker.close();
  });

  it('puts the tenant on metrics only with metricsByTenant', async () => {
    const tracker = createCostTracker({ budgets, builtInPrices: false, metricsByTenant: true });
    const reservation = await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 });
    await tracker.settle(reservation, { costUsd: 0.25 });
    const collected = await telemetry.meters.collect();
    expect(collected.get('infergate.cost.spent')?.dataPoints[0]?.attributes).toEqual({
      'gen_ai.request.model': 'm',
      'infergate.tenant': 'acme',
    });
    const lines = collected.get('infergate.cost.budget.remaining')?.dataPoints ?? [];
    expect(lines).toHaveLength(1);
    expect(lines[0]?.attributes['infergate.budget']).toBe('hourly');
    expect(String(lines[0]?.attributes['infergate.budget.line'])).toContain('acme');
    await tracker.close();
  });

  it('records nothing with tracing: false', async () => {
    const tracker = createCostTracker({ budgets, builtInPrices: false, tracing: false });
    const reservation = await tracker.reserve({ tenant: 'acme', estimateUsd: 0.25 });
    await tracker.settle(reservation, { costUsd: 0.25 });
    const collected = await telemetry.meters.collect();
    expect(collected.has('infergate.cost.spent')).toBe(false);
    expect(collected.has('infergate.cost.reservations')).toBe(false);
    await tracker.close();
  });
});
