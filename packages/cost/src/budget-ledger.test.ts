import { describe, expect, it } from 'vitest';
import type { ReserveRequest, SettleRequest } from './budget-store.js';
import { CostTracker } from './cost-tracker.js';
import { MemoryBudgetStore } from './memory-budget-store.js';

const budgets = [{ id: 'daily', scope: ['tenant' as const], window: 'day' as const, hardLimitUsd: 10 }];

describe('BudgetLedger settle and release are idempotent', () => {
  it('a reservation settled twice (or settled then released) counts once', async () => {
    const tracker = new CostTracker({ budgets });
    const reservation = await tracker.reserve({ tenant: 'acme', estimateUsd: 1 });
    expect(await tracker.settle(reservation, { costUsd: 0.5 })).toBeDefined();
    expect(await tracker.settle(reservation, { costUsd: 0.5 })).toBeUndefined();
    await tracker.release(reservation);
    const spend = await tracker.spend('daily', { tenant: 'acme' });
    expect(spend.spentUsd).toBe(0.5);
    expect(spend.reservedUsd).toBe(0);
  });

  it('a reservation object made elsewhere (a plain copy) also settles once', async () => {
    const tracker = new CostTracker({ budgets });
    const reservation = await tracker.reserve({ tenant: 'acme', estimateUsd: 1 });
    const copy = { ...reservation };
    // The finished mark is not a visible field: a reservation shows (and copies) its data only.
    expect(Object.keys(reservation).sort()).toEqual([
      'attribution',
      'createdAt',
      'estimateUsd',
      'expiresAt',
      'id',
      'provider',
    ]);
    expect(await tracker.settle(copy, { costUsd: 0.25 })).toBeDefined();
    expect(await tracker.settle(copy, { costUsd: 0.25 })).toBeUndefined();
    const spend = await tracker.spend('daily', { tenant: 'acme' });
    expect(spend.spentUsd).toBe(0.25);
    expect(spend.reservedUsd).toBe(0);
  });
});

describe('BudgetLedger settle across a window boundary', () => {
  it('a reservation made before midnight and settled after it charges the new day', async () => {
    let now = Date.parse('2025-06-01T23:59:59.900Z');
    const tracker = new CostTracker({ budgets, clock: () => now });
    const reservation = await tracker.reserve({ tenant: 'acme', estimateUsd: 1 });
    now = Date.parse('2025-06-02T00:00:00.100Z');
    await tracker.settle(reservation, { costUsd: 0.75 });
    const spend = await tracker.spend('daily', { tenant: 'acme' });
    expect(spend.spentUsd).toBe(0.75);
    expect(spend.windowStart).toBe(Date.parse('2025-06-02T00:00:00Z'));
    now = Date.parse('2025-06-01T12:00:00Z');
    expect((await tracker.spend('daily', { tenant: 'acme' })).spentUsd).toBe(0);
  });
});

describe('BudgetLedger answers with promises', () => {
  it('a bad estimate, a passed limit and a settle that fails come back as rejections, not throws', async () => {
    const tracker = new CostTracker({ budgets });
    let bad: Promise<unknown> | undefined;
    expect(() => {
      bad = tracker.reserve({ tenant: 'acme', estimateUsd: -1 });
    }).not.toThrow();
    await expect(bad).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    let over: Promise<unknown> | undefined;
    expect(() => {
      over = tracker.reserve({ tenant: 'acme', estimateUsd: 11 });
    }).not.toThrow();
    await expect(over).rejects.toMatchObject({ code: 'BUDGET_EXCEEDED', details: { estimateUsd: 11 } });
    const reservation = await tracker.reserve({ tenant: 'acme', estimateUsd: 1 });
    let failed: Promise<unknown> | undefined;
    expect(() => {
      failed = tracker.settle(reservation, null as never);
    }).not.toThrow();
    await expect(failed).rejects.toBeInstanceOf(TypeError);
  });
});

describe('BudgetLedger over a subclass of the in-memory store', () => {
  it("calls the subclass's reserve, settle and release, not the in-memory store's own entry points", async () => {
    const calls: string[] = [];
    class CountingStore extends MemoryBudgetStore {
      override reserve(request: ReserveRequest) {
        calls.push('reserve');
        return super.reserve(request);
      }
      override settle(request: SettleRequest) {
        calls.push('settle');
        super.settle(request);
      }
      override release(id: string, now: number) {
        calls.push('release');
        super.release(id, now);
      }
    }
    const tracker = new CostTracker({ budgets, store: new CountingStore() });
    const first = await tracker.reserve({ tenant: 'acme', estimateUsd: 1 });
    await tracker.settle(first, { costUsd: 0.5 });
    await tracker.release(await tracker.reserve({ tenant: 'acme', estimateUsd: 1 }));
    expect(calls).toEqual(['reserve', 'settle', 'reserve', 'release']);
    const spend = await tracker.spend('daily', { tenant: 'acme' });
    expect(spend.spentUsd).toBe(0.5);
    expect(spend.reservedUsd).toBe(0);
  });
});
