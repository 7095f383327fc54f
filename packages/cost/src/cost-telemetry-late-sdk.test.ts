import { context, metrics, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from '../../../test/unit/otel-metrics.js';
import { type CostTracker, createCostTracker } from './cost-tracker.js';

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

/** The reservations a provider's reader sees held (0 when it saw none counted). */
async function heldOn(meters: InMemoryMetrics): Promise<number> {
  const points = await meters.points('infergate.cost.reservations');
  return points.reduce((sum, point) => sum + (point.value as number), 0);
}

describe('infergate.cost.reservations with the MeterProvider changed while a reservation is held', () => {
  // Each reservation is counted down on the provider it was counted up on: a reservation made before
  // the application registered (or replaced) its MeterProvider must not take one off the new one.
  const installed: InMemoryMetrics[] = [];
  let tracker: CostTracker | undefined;
  const reserve = () => (tracker as CostTracker).reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 });

  async function cleanUp(): Promise<void> {
    await tracker?.close();
    tracker = undefined;
    // Uninstalling disables the global provider and shuts its own down; the last one first.
    for (const meters of installed.reverse()) await meters.uninstall();
    installed.length = 0;
  }

  function install(): InMemoryMetrics {
    const meters = installInMemoryMetrics();
    installed.push(meters);
    return meters;
  }

  /** Replaces the global MeterProvider with a new one, the old one still readable. */
  function replace(): InMemoryMetrics {
    metrics.disable();
    return install();
  }

  it('replaced between reserve and settle: the new provider never reads below zero, the old one back to zero', async () => {
    try {
      tracker = createCostTracker({ budgets, builtInPrices: false });
      const first = install();
      const reservation = await reserve();
      expect(await heldOn(first)).toBe(1);
      const second = replace();
      await tracker.settle(reservation, { costUsd: 0.125 });
      expect(await heldOn(second)).toBe(0);
      expect(await heldOn(first)).toBe(0);
      // A reservation made on the new provider is counted up and down there.
      const next = await reserve();
      expect(await heldOn(second)).toBe(1);
      await tracker.release(next);
      expect(await heldOn(second)).toBe(0);
      expect(await heldOn(first)).toBe(0);
    } finally {
      await cleanUp();
    }
  });

  it('replaced between reserve and release, for several reservations, on a tracker made before any SDK', async () => {
    try {
      tracker = createCostTracker({ budgets, builtInPrices: false });
      const before = await reserve();
      const first = install();
      const held = [await reserve(), await reserve()];
      expect(await heldOn(first)).toBe(2);
      const second = replace();
      const after = await reserve();
      expect(await heldOn(second)).toBe(1);
      await tracker.release(before);
      for (const reservation of held) await tracker.settle(reservation, { costUsd: 0.1 });
      expect(await heldOn(second)).toBe(1);
      expect(await heldOn(first)).toBe(0);
      await tracker.settle(after, { costUsd: 0.1 });
      expect(await heldOn(second)).toBe(0);
    } finally {
      await cleanUp();
    }
  });

  it('removed between reserve and settle: counted down on the provider it was counted on', async () => {
    try {
      tracker = createCostTracker({ budgets, builtInPrices: false });
      const first = install();
      const reservation = await reserve();
      metrics.disable();
      await tracker.settle(reservation, { costUsd: 0.125 });
      expect(await heldOn(first)).toBe(0);
    } finally {
      await cleanUp();
    }
  });
});
