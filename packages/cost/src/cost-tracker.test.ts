import { ErrorCode, InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import type { BudgetLimitEvent, PriceUnknownEvent } from './cost-events.js';
import { CostTracker } from './cost-tracker.js';
import { gpuShareUsd } from './gpu-cost.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import { reportToCsv } from './spend-report.js';

function clock(start: string) {
  let now = Date.parse(start);
  return {
    now: () => now,
    set: (text: string) => (now = Date.parse(text)),
    advance: (ms: number) => (now += ms),
  };
}

async function rejection(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InfergateError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('CostTracker budgets (memory ledger)', () => {
  it('rejects a call that would pass a hard limit, with retryAfterMs to the window reset', async () => {
    const time = clock('2025-06-01T10:59:30Z');
    const tracker = new CostTracker({
      clock: time.now,
      budgets: [{ id: 'hourly', scope: ['tenant'], window: 'hour', hardLimitUsd: 1 }],
    });
    const exceeded: BudgetLimitEvent[] = [];
    tracker.on('budget-exceeded', (event) => exceeded.push(event));
    const first = await tracker.reserve({ tenant: 'acme', estimateUsd: 0.6 });
    const error = await rejection(tracker.reserve({ tenant: 'acme', estimateUsd: 0.5 }));
    expect(error.code).toBe(ErrorCode.BudgetExceeded);
    expect(error.retryAfterMs).toBe(30_000);
    expect(error.details).toMatchObject({ budgetId: 'hourly', line: 'hourly|tenant=acme', reservedUsd: 0.6 });
    expect(exceeded).toHaveLength(1);
    // Another tenant has its own line.
    await tracker.release(await tracker.reserve({ tenant: 'globex', estimateUsd: 0.9 }));
    // Settling below the estimate frees the difference.
    await tracker.settle(first, { costUsd: 0.2 });
    await tracker.reserve({ tenant: 'acme', estimateUsd: 0.8 });
    expect(await tracker.spend('hourly', { tenant: 'acme' })).toMatchObject({
      spentUsd: 0.2,
      reservedUsd: 0.8,
    });
  });

  it('emits budget-soft-limit once per line and window, and lets the call through', async () => {
    const time = clock('2025-06-01T00:00:00Z');
    const tracker = new CostTracker({
      clock: time.now,
      budgets: [{ id: 'daily', scope: ['tenant'], window: 'day', softLimitUsd: 1 }],
    });
    const events: BudgetLimitEvent[] = [];
    tracker.on('budget-soft-limit', (event) => events.push(event));
    for (let i = 0; i < 5; i++)
      await tracker.settle(await tracker.reserve({ tenant: 'a', estimateUsd: 0.4 }), { costUsd: 0.4 });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ budgetId: 'daily', limitUsd: 1, spentUsd: 0.8, estimateUsd: 0.4 });
    time.set('2025-06-02T00:00:00Z');
    for (let i = 0; i < 3; i++)
      await tracker.settle(await tracker.reserve({ tenant: 'a', estimateUsd: 0.4 }), { costUsd: 0.4 });
    expect(events).toHaveLength(2);
  });

  it('scopes key budgets on the chosen dimensions and filters with match', async () => {
    const tracker = new CostTracker({
      budgets: [
        { id: 'per-tenant-model', scope: ['tenant', 'model'], window: 'day', hardLimitUsd: 1 },
        { id: 'gpt4o-global', match: { model: 'gpt-4o' }, window: 'month', hardLimitUsd: 1.5 },
        { id: 'per-key', scope: ['key'], window: 'minute', hardLimitUsd: 10 },
      ],
    });
    await tracker.reserve({ tenant: 't1', model: 'gpt-4o', key: 'k', estimateUsd: 1 });
    await tracker.reserve({ tenant: 't1', model: 'gpt-4o-mini', key: 'k', estimateUsd: 1 });
    const perTenant = await rejection(tracker.reserve({ tenant: 't1', model: 'gpt-4o', estimateUsd: 0.1 }));
    expect(perTenant.details?.budgetId).toBe('per-tenant-model');
    const global = await rejection(tracker.reserve({ tenant: 't2', model: 'gpt-4o', estimateUsd: 0.6 }));
    expect(global.details?.budgetId).toBe('gpt4o-global');
    await tracker.reserve({ tenant: 't2', model: 'claude-haiku-4-5', estimateUsd: 0.9 });
    expect((await tracker.spend('per-key', { key: 'k' })).reservedUsd).toBe(2);
    expect((await tracker.spend('per-key', {})).reservedUsd).toBe(0.9); // no key: the "-" line
  });

  it('a failed reservation holds nothing on the other budgets (all or none)', async () => {
    const tracker = new CostTracker({
      budgets: [
        { id: 'big', window: 'day', hardLimitUsd: 100 },
        { id: 'small', scope: ['tenant'], window: 'day', hardLimitUsd: 1 },
      ],
    });
    await rejection(tracker.reserve({ tenant: 'a', estimateUsd: 2 }));
    expect((await tracker.spend('big')).reservedUsd).toBe(0);
  });

  it('unknown model: cost is null with a PRICE_UNKNOWN event, never 0', async () => {
    const tracker = new CostTracker();
    const unknown: PriceUnknownEvent[] = [];
    tracker.on('price-unknown', (event) => unknown.push(event));
    expect(
      tracker.costOfUsage({ model: 'mystery-7b', usage: { inputTokens: 10, outputTokens: 10 } }),
    ).toBeNull();
    expect(await tracker.estimateChat({ model: 'mystery-7b', messages: [] })).toBeNull();
    expect(tracker.gpuCost({ model: 'resnet', computeNs: 1_000_000 })).toBeNull();
    expect(unknown.map((event) => [event.code, event.kind, event.model])).toEqual([
      ['PRICE_UNKNOWN', 'tokens', 'mystery-7b'],
      ['PRICE_UNKNOWN', 'tokens', 'mystery-7b'],
      ['PRICE_UNKNOWN', 'gpu', 'resnet'],
    ]);
    const reservation = await tracker.reserve({ tenant: 'a', model: 'mystery-7b', estimateUsd: 0 });
    expect(await tracker.settleUsage(reservation, { inputTokens: 5, outputTokens: 5 })).toBeNull();
    const report = await tracker.report();
    expect(report.rows).toEqual([
      expect.objectContaining({ tenant: 'a', model: 'mystery-7b', costUsd: 0, calls: 1, unpricedCalls: 1 }),
    ]);
  });

  it('a reservation that is never settled stops holding budget after its TTL', async () => {
    const time = clock('2025-06-01T12:00:00Z');
    const store = new MemoryBudgetStore();
    const tracker = new CostTracker({
      clock: time.now,
      store,
      reservationTtlMs: 30_000,
      budgets: [{ id: 'day', window: 'day', hardLimitUsd: 1 }],
    });
    const crashed = await tracker.reserve({ estimateUsd: 1 });
    await rejection(tracker.reserve({ estimateUsd: 0.5 }));
    time.advance(29_999);
    await rejection(tracker.reserve({ estimateUsd: 0.5 }));
    time.advance(1);
    const next = await tracker.reserve({ estimateUsd: 0.5 });
    expect(store.heldCount).toBe(1);
    // The late settle of the expired reservation still records what the call cost.
    await tracker.settle(crashed, { costUsd: 0.25 });
    await tracker.settle(next, { costUsd: 0.5 });
    expect(await tracker.spend('day')).toMatchObject({ spentUsd: 0.75, reservedUsd: 0 });
  });

  it('calendar windows roll over exactly at the boundary', async () => {
    const time = clock('2025-06-01T10:00:59.999Z');
    const tracker = new CostTracker({
      clock: time.now,
      budgets: [{ id: 'minute', window: 'minute', hardLimitUsd: 1 }],
    });
    await tracker.settle(await tracker.reserve({ estimateUsd: 1 }), { costUsd: 1 });
    const error = await rejection(tracker.reserve({ estimateUsd: 0.01 }));
    expect(error.retryAfterMs).toBe(1);
    time.advance(1);
    expect(await tracker.spend('minute')).toMatchObject({
      spentUsd: 0,
      windowStart: Date.parse('2025-06-01T10:01:00Z'),
    });
    await tracker.reserve({ estimateUsd: 1 });
  });

  it('rolling windows forget spend once its sub-bucket leaves the window', async () => {
    const time = clock('2025-06-01T10:00:00Z');
    const tracker = new CostTracker({
      clock: time.now,
      budgets: [{ id: 'rolling', window: 'minute', kind: 'rolling', rollingBuckets: 6, hardLimitUsd: 1 }],
    });
    await tracker.settle(await tracker.reserve({ estimateUsd: 1 }), { costUsd: 1 });
    time.advance(60_000); // one full window later the bucket is still counted (≤ one extra bucket)
    const error = await rejection(tracker.reserve({ estimateUsd: 0.01 }));
    expect(error.retryAfterMs).toBe(10_000);
    time.advance(10_000);
    expect((await tracker.spend('rolling')).spentUsd).toBe(0);
  });

  it('concurrent calls never overspend: settled ≤ limit with actual ≤ estimate', async () => {
    const tracker = new CostTracker({ budgets: [{ id: 'day', window: 'day', hardLimitUsd: 5 }] });
    let rejected = 0;
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    await Promise.all(
      Array.from({ length: 500 }, async (_, index) => {
        const estimate = 0.01 + random() * 0.05;
        const actual = estimate * random();
        let reservation: Awaited<ReturnType<CostTracker['reserve']>>;
        try {
          reservation = await tracker.reserve({ tenant: `t${index % 4}`, estimateUsd: estimate });
        } catch {
          rejected++;
          return;
        }
        await new Promise((resolve) => setImmediate(resolve));
        if (index % 10 === 0) await tracker.release(reservation);
        else await tracker.settle(reservation, { costUsd: actual });
      }),
    );
    const spend = await tracker.spend('day');
    expect(rejected).toBeGreaterThan(0);
    expect(spend.reservedUsd).toBe(0);
    expect(spend.spentUsd).toBeLessThanOrEqual(5);
  });

  it('reports spend by tenant, model and day as JSON and CSV', async () => {
    const time = clock('2025-06-01T23:00:00Z');
    const tracker = new CostTracker({ clock: time.now });
    await tracker.record({
      tenant: 'acme',
      model: 'gpt-4o',
      provider: 'openai',
      costUsd: 0.5,
      inputTokens: 100,
      outputTokens: 10,
    });
    await tracker.record({
      tenant: 'acme',
      model: 'gpt-4o',
      provider: 'openai',
      costUsd: 0.25,
      inputTokens: 50,
      outputTokens: 5,
    });
    time.advance(3_600_000);
    await tracker.record({ tenant: 'a,"b"', model: 'claude-haiku-4-5', costUsd: 1 });
    const report = await tracker.report({ from: '2025-06-01', to: '2025-06-02' });
    expect(report.totalUsd).toBeCloseTo(1.75);
    expect(report.rows).toEqual([
      {
        day: '2025-06-01',
        tenant: 'acme',
        model: 'gpt-4o',
        costUsd: 0.75,
        calls: 2,
        unpricedCalls: 0,
        inputTokens: 150,
        outputTokens: 15,
      },
      {
        day: '2025-06-02',
        tenant: 'a,"b"',
        model: 'claude-haiku-4-5',
        costUsd: 1,
        calls: 1,
        unpricedCalls: 0,
        inputTokens: 0,
        outputTokens: 0,
      },
    ]);
    expect(reportToCsv(report)).toBe(
      'day,tenant,model,costUsd,calls,unpricedCalls,inputTokens,outputTokens\r\n' +
        '2025-06-01,acme,gpt-4o,0.75,2,0,150,15\r\n' +
        '2025-06-02,"a,""b""",claude-haiku-4-5,1,1,0,0,0\r\n',
    );
    const byTenant = await tracker.report({ from: '2025-06-01', to: '2025-06-02', groupBy: ['tenant'] });
    expect(byTenant.rows.map((row) => [row.tenant, row.costUsd])).toEqual([
      ['a,"b"', 1],
      ['acme', 0.75],
    ]);
    expect((tracker.store as MemoryBudgetStore).entries()).toHaveLength(3);
  });

  it('rejects bad budgets with INVALID_ARGUMENT naming the field', () => {
    const invalid = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        expect(error).toBeInstanceOf(InfergateError);
        expect((error as InfergateError).code).toBe('INVALID_ARGUMENT');
        return (error as InfergateError).rawMessage;
      }
      throw new Error('expected an error');
    };
    expect(invalid(() => new CostTracker({ budgets: [{ id: 'x', window: 'day' }] }))).toMatch(
      /hardLimitUsd, softLimitUsd/,
    );
    expect(
      invalid(() => new CostTracker({ budgets: [{ id: 'x', window: 'day', hardLimitUsd: -1 }] })),
    ).toMatch(/0\.hardLimitUsd/);
    expect(
      invalid(
        () =>
          new CostTracker({
            budgets: [
              { id: 'x', window: 'day', hardLimitUsd: 1 },
              { id: 'x', window: 'hour', hardLimitUsd: 1 },
            ],
          }),
      ),
    ).toMatch(/duplicate/);
    expect(invalid(() => new CostTracker({ gpuPrices: [{ usdPerGpuHour: -2 }] }))).toMatch(/usdPerGpuHour/);
    expect(
      invalid(() => gpuShareUsd({ usdPerGpuHour: 1 }, { model: 'm', rows: 1, batchRows: 0, computeNs: 1 })),
    ).toMatch(/batchRows/);
  });

  it('rejects a negative estimate with INVALID_ARGUMENT', async () => {
    const tracker = new CostTracker({ budgets: [{ id: 'x', window: 'day', hardLimitUsd: 1 }] });
    await expect(tracker.reserve({ tenant: 'a', estimateUsd: -1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('budget messages', () => {
  it('show money for humans and keep the exact numbers in details', async () => {
    const tracker = new CostTracker({
      budgets: [{ id: 'tiny', scope: ['tenant'], window: 'hour', hardLimitUsd: 0.0001 }],
    });
    const estimateUsd = 0.00010279999999999999;
    const error = await rejection(tracker.reserve({ tenant: 'acme', estimateUsd }));
    expect(error.code).toBe(ErrorCode.BudgetExceeded);
    expect(error.rawMessage).toContain('limit of $0.0001:');
    expect(error.rawMessage).toContain('this call $0.0001028');
    expect(error.rawMessage).not.toMatch(/\d{8,}/);
    expect(error.details).toMatchObject({ limitUsd: 0.0001, estimateUsd });
  });
});
