import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ErrorCode } from '@infergate/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServerHandle, startRedisServer } from '../../../test/redis/redis-server.js';
import { CostTracker } from './cost-tracker.js';
import { RedisBudgetStore } from './redis-budget-store.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
let server: RedisServerHandle;
let redis: Redis;
let prefixes = 0;
const prefix = () => `{test:${++prefixes}}`;

function clock(start: string) {
  let now = Date.parse(start);
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

beforeAll(async () => {
  server = await startRedisServer({ persistent: true });
  redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 3 });
}, 30_000);

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

function child(
  args: string[],
): Promise<{ rejected: number; settledUsd: number; largestEstimateUsd: number }> {
  return new Promise((resolve, reject) => {
    const process = spawn(
      join(ROOT, 'node_modules/.bin/tsx'),
      ['--conditions=@infergate/source', join(ROOT, 'test/redis/concurrent-spender.ts'), ...args],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    process.stdout.on('data', (chunk) => (out += chunk));
    process.stderr.on('data', (chunk) => (err += chunk));
    process.once('error', reject);
    process.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').pop() ?? ''))
        : reject(new Error(`child exited ${code}: ${err}`)),
    );
  });
}

describe('RedisBudgetStore (real redis-server)', () => {
  it('reserves, rejects, settles and reports like the memory ledger', async () => {
    const time = clock('2025-06-01T10:59:00Z');
    const tracker = new CostTracker({
      clock: time.now,
      store: new RedisBudgetStore({ redis, prefix: prefix() }),
      budgets: [{ id: 'hourly', scope: ['tenant'], window: 'hour', hardLimitUsd: 1, softLimitUsd: 0.5 }],
    });
    const soft: unknown[] = [];
    tracker.on('budget-soft-limit', (event) => soft.push(event));
    const first = await tracker.reserve({
      tenant: 'acme',
      model: 'gpt-4o',
      provider: 'openai',
      estimateUsd: 0.6,
    });
    expect(soft).toHaveLength(1);
    await expect(tracker.reserve({ tenant: 'acme', estimateUsd: 0.5 })).rejects.toMatchObject({
      code: ErrorCode.BudgetExceeded,
      retryAfterMs: 60_000,
    });
    await tracker.settle(first, { costUsd: 0.123456789, inputTokens: 10, outputTokens: 2 });
    expect(await tracker.spend('hourly', { tenant: 'acme' })).toMatchObject({
      spentUsd: 0.123456789,
      reservedUsd: 0,
    });
    await tracker.release(await tracker.reserve({ tenant: 'acme', estimateUsd: 0.8 }));
    const report = await tracker.report({ groupBy: ['day', 'tenant', 'model'] });
    expect(report.rows).toEqual([
      {
        day: '2025-06-01',
        tenant: 'acme',
        model: 'gpt-4o',
        costUsd: 0.123456789,
        calls: 1,
        unpricedCalls: 0,
        inputTokens: 10,
        outputTokens: 2,
      },
    ]);
  });

  it('rolls windows over exactly at the boundary (keys named by window start, with a TTL)', async () => {
    const time = clock('2025-06-01T23:59:59.999Z');
    const keyPrefix = prefix();
    const tracker = new CostTracker({
      clock: time.now,
      store: new RedisBudgetStore({ redis, prefix: keyPrefix }),
      budgets: [{ id: 'daily', window: 'day', hardLimitUsd: 1 }],
    });
    await tracker.settle(await tracker.reserve({ estimateUsd: 1 }), { costUsd: 1 });
    await expect(tracker.reserve({ estimateUsd: 0.01 })).rejects.toMatchObject({ retryAfterMs: 1 });
    const key = `${keyPrefix}:spent:daily:${Date.parse('2025-06-01T00:00:00Z')}`;
    expect(await redis.get(key)).toBe('1000000000');
    const ttl = await redis.pttl(key); // expires one window after the window ends, by the caller's clock
    expect(ttl).toBeGreaterThan(86_400_000 - 5_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000 + 1);
    time.advance(1);
    await tracker.reserve({ estimateUsd: 1 });
  });

  it('expired reservations stop holding budget', async () => {
    const time = clock('2025-06-01T12:00:00Z');
    const tracker = new CostTracker({
      clock: time.now,
      reservationTtlMs: 5_000,
      store: new RedisBudgetStore({ redis, prefix: prefix() }),
      budgets: [{ id: 'day', window: 'day', hardLimitUsd: 1 }],
    });
    await tracker.reserve({ estimateUsd: 1 });
    await expect(tracker.reserve({ estimateUsd: 0.5 })).rejects.toMatchObject({
      code: ErrorCode.BudgetExceeded,
    });
    time.advance(5_000);
    await tracker.reserve({ estimateUsd: 0.5 });
    expect((await tracker.spend('day')).reservedUsd).toBe(0.5);
  });

  it('falls back to EVAL after the script cache is flushed', async () => {
    const tracker = new CostTracker({
      store: new RedisBudgetStore({ redis, prefix: prefix() }),
      budgets: [{ id: 'day', window: 'day', hardLimitUsd: 1 }],
    });
    await tracker.settle(await tracker.reserve({ estimateUsd: 0.1 }), { costUsd: 0.1 });
    await redis.script('FLUSH');
    await tracker.settle(await tracker.reserve({ estimateUsd: 0.1 }), { costUsd: 0.1 });
    expect((await tracker.spend('day')).spentUsd).toBeCloseTo(0.2, 9);
  });

  it('200 concurrent calls from 4 processes never overspend one budget', async () => {
    const keyPrefix = prefix();
    const limit = 2;
    const results = await Promise.all(
      [11, 22, 33, 44].map((seed) => child([server.url, keyPrefix, String(limit), String(seed), '50'])),
    );
    const largest = Math.max(...results.map((result) => result.largestEstimateUsd));
    const tracker = new CostTracker({
      store: new RedisBudgetStore({ redis, prefix: keyPrefix }),
      budgets: [{ id: 'shared', window: 'day', hardLimitUsd: limit }],
    });
    const spend = await tracker.spend('shared');
    const settled = results.reduce((sum, result) => sum + result.settledUsd, 0);
    expect(spend.spentUsd).toBeCloseTo(settled, 6);
    expect(spend.spentUsd).toBeLessThanOrEqual(limit + largest);
    expect(spend.spentUsd).toBeLessThanOrEqual(limit); // actual ≤ estimate: not even one reservation over
    expect(spend.reservedUsd).toBe(0);
    expect(results.reduce((sum, result) => sum + result.rejected, 0)).toBeGreaterThan(0);
  }, 60_000);

  it('keeps totals across a redis-server restart (append-only file)', async () => {
    const keyPrefix = prefix();
    const make = (client: Redis) =>
      new CostTracker({
        store: new RedisBudgetStore({ redis: client, prefix: keyPrefix }),
        budgets: [{ id: 'month', scope: ['tenant'], window: 'month', hardLimitUsd: 100 }],
      });
    await make(redis).record({ tenant: 'acme', model: 'gpt-4o', costUsd: 4.25 });
    await server.restart();
    const fresh = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 3 });
    try {
      const after = make(fresh);
      expect((await after.spend('month', { tenant: 'acme' })).spentUsd).toBe(4.25);
      expect((await after.report()).totalUsd).toBe(4.25);
    } finally {
      fresh.disconnect();
    }
  }, 30_000);
});
