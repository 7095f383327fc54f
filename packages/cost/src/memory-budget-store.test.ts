import { describe, expect, it } from 'vitest';
import { CostTracker } from './cost-tracker.js';
import { MemoryBudgetStore } from './memory-budget-store.js';

const budgets = [{ id: 'daily', scope: ['tenant' as const], window: 'day' as const, hardLimitUsd: 10 }];

describe('MemoryBudgetStore holds the ledger’s reservations by their record', () => {
  it('a reservation made through the tracker can be released by id on the store, once', async () => {
    const store = new MemoryBudgetStore();
    const tracker = new CostTracker({ budgets, store });
    const kept = await tracker.reserve({ tenant: 'acme', estimateUsd: 1 });
    const released = await tracker.reserve({ tenant: 'acme', estimateUsd: 2 });
    expect(store.heldCount).toBe(2);
    store.release(released.id, Date.now());
    expect(store.heldCount).toBe(1);
    expect((await tracker.spend('daily', { tenant: 'acme' })).reservedUsd).toBe(1);
    // Settling it afterwards records the spend and frees nothing a second time.
    await tracker.settle(released, { costUsd: 0.5 });
    expect(await tracker.spend('daily', { tenant: 'acme' })).toMatchObject({ spentUsd: 0.5, reservedUsd: 1 });
    // Reservations made after the lookup by id are found by id too.
    const later = await tracker.reserve({ tenant: 'acme', estimateUsd: 3 });
    store.release(later.id, Date.now());
    expect(store.heldCount).toBe(1);
    await tracker.settle(kept, { costUsd: 1 });
    expect(store.heldCount).toBe(0);
    expect(await tracker.spend('daily', { tenant: 'acme' })).toMatchObject({ spentUsd: 1.5, reservedUsd: 0 });
  });

  it('a reservation settled through another tracker’s store leaves the first store’s hold alone', async () => {
    const first = new MemoryBudgetStore();
    const second = new MemoryBudgetStore();
    const a = new CostTracker({ budgets, store: first });
    const b = new CostTracker({ budgets, store: second });
    const other = await b.reserve({ tenant: 'acme', estimateUsd: 4 });
    const reservation = await a.reserve({ tenant: 'acme', estimateUsd: 1 });
    await b.settle(reservation, { costUsd: 0.25 });
    expect(first.heldCount).toBe(1);
    expect(second.heldCount).toBe(1);
    expect(await b.spend('daily', { tenant: 'acme' })).toMatchObject({ spentUsd: 0.25, reservedUsd: 4 });
    expect((await a.spend('daily', { tenant: 'acme' })).reservedUsd).toBe(1);
    await b.release(other);
    expect(second.heldCount).toBe(0);
  });

  it('keeps a group’s daily totals apart on each UTC day', async () => {
    let now = Date.parse('2025-06-01T23:59:59Z');
    const store = new MemoryBudgetStore();
    const tracker = new CostTracker({ budgets, store, clock: () => now });
    await tracker.settle(await tracker.reserve({ tenant: 'acme', estimateUsd: 1 }), { costUsd: 0.5 });
    now += 2_000;
    await tracker.settle(await tracker.reserve({ tenant: 'acme', estimateUsd: 1 }), { costUsd: 0.25 });
    await tracker.settle(await tracker.reserve({ tenant: 'acme', estimateUsd: 1 }), { costUsd: 0.125 });
    expect(store.daily('2025-06-01', '2025-06-02').map((row) => [row.day, row.costUsd, row.calls])).toEqual([
      ['2025-06-01', 0.5, 1],
      ['2025-06-02', 0.375, 2],
    ]);
  });
});
