import { describe, expect, it } from 'vitest';
import { fullJitterDelay, retryPassDelay } from './full-jitter-delay.js';
import { RetryBudget } from './retry-budget.js';

describe('RetryBudget', () => {
  it('allows retries up to ratio × requests plus the per-second floor over the window', () => {
    const budget = new RetryBudget({ ratio: 0.2, minPerSecond: 1, windowMs: 1000 });
    for (let i = 0; i < 100; i++) budget.recordRequest(0);
    let granted = 0;
    while (budget.tryRetry(10)) granted++;
    expect(granted).toBe(21); // 20% of 100, plus 1 per second
  });

  it('refills as old requests and retries leave the sliding window', () => {
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 2, windowMs: 1000 });
    expect([budget.tryRetry(0), budget.tryRetry(0), budget.tryRetry(0)]).toEqual([true, true, false]);
    expect(budget.tryRetry(1100)).toBe(true);
  });
});

describe('RetryBudget after a lull', () => {
  it('with skipsIdleTime, judges the first retries after a lull against the last window of traffic', () => {
    const budget = new RetryBudget({ ratio: 0.1, minPerSecond: 0, windowMs: 1000, skipsIdleTime: true });
    // 100 requests over one second: ten buckets of ten.
    for (let i = 0; i < 100; i++) budget.recordRequest(i * 10);
    // Four seconds of silence, then one request: it and the nine newest buckets before the lull
    // (91 requests) make the window.
    budget.recordRequest(5000);
    let granted = 0;
    while (budget.tryRetry(5000)) granted++;
    expect(granted).toBe(9);
  });

  it('without it, a lull longer than the window empties the window', () => {
    const budget = new RetryBudget({ ratio: 0.1, minPerSecond: 0, windowMs: 1000 });
    for (let i = 0; i < 100; i++) budget.recordRequest(i * 10);
    budget.recordRequest(5000);
    expect(budget.tryRetry(5000)).toBe(false);
  });
});

describe('fullJitterDelay', () => {
  it('is uniform below the capped exponential', () => {
    expect(fullJitterDelay(0, 50, 1000, () => 0.999)).toBeCloseTo(49.95);
    expect(fullJitterDelay(3, 50, 1000, () => 0.5)).toBe(200);
    expect(fullJitterDelay(10, 50, 1000, () => 0.5)).toBe(500);
    expect(fullJitterDelay(2, 50, 1000, () => 0)).toBe(0);
  });
});

describe('retryPassDelay', () => {
  it('waits a Retry-After plus the jittered backoff, capped in all, and gives up past the cap', () => {
    expect(retryPassDelay(0, 100, 1000, 0, () => 0.5)).toBe(50);
    expect(retryPassDelay(0, 100, 1000, 300, () => 0.5)).toBe(350);
    expect(retryPassDelay(0, 100, 1000, 300, () => 0)).toBe(300);
    expect(retryPassDelay(3, 100, 1000, 900, () => 0.5)).toBe(1000);
    expect(retryPassDelay(0, 100, 1000, 1001, () => 0.5)).toBeUndefined();
  });
});

describe('RetryBudget requests in the newest bucket', () => {
  it('counts them, and lets them leave the window like any other', () => {
    const budget = new RetryBudget({ ratio: 1, minPerSecond: 0, windowMs: 1000 });
    budget.recordRequest(0);
    budget.recordRequest(50); // the same bucket as the first
    budget.recordRequest(99);
    expect([budget.tryRetry(99), budget.tryRetry(99), budget.tryRetry(99), budget.tryRetry(99)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    // A new bucket: the first one's three requests (and its retries) have left the window, so the
    // one request at 1050 allows exactly one retry.
    budget.recordRequest(1050);
    expect([budget.tryRetry(1099), budget.tryRetry(1099)]).toEqual([true, false]);
  });
});
