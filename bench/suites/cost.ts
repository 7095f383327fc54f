// Suite `cost`: what accounting adds to a call. (1) In-memory ledger: reserve + settle per call on
// a tenant-scoped daily budget, against a baseline loop of two awaited no-op async calls, interleaved
// A B A B in one run; the named figure is the difference in µs per call. (2) Redis ledger on
// loopback (a real redis-server started by test/redis's harness): reserve + settle latency p50/p99.
//   pnpm bench cost [--calls 200000] [--reps 5] [--redis-calls 2000]
import { performance } from 'node:perf_hooks';
import { CostTracker, RedisBudgetStore } from '@infergate/cost';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../test/redis/redis-server.js';
import { type BenchCase, flag, median, packageVersion, percentile, report } from '../lib.js';

export const budgets = [
  { id: 'daily', scope: ['tenant' as const], window: 'day' as const, hardLimitUsd: 1e9 },
];

/** What the loop needs of a cost tracker (bench/cost-ab.ts passes another build's). */
export interface Ledger {
  reserve(request: { tenant: string; model: string; estimateUsd: number }): Promise<unknown>;
  settle(
    reservation: unknown,
    details: { costUsd: number; inputTokens: number; outputTokens: number },
  ): Promise<unknown>;
}

async function noop(): Promise<void> {}

/** µs per iteration of two awaited no-ops: the baseline the ledger's figure is taken over. */
export async function baselineLoop(calls: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    await noop();
    await noop();
  }
  return ((performance.now() - started) * 1000) / calls;
}

/** µs per reserve + settle of `tracker`, alternating two tenants. */
export async function ledgerLoop(tracker: Ledger, calls: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const reservation = await tracker.reserve({
      tenant: i & 1 ? 'acme' : 'globex',
      model: 'gpt-4o',
      estimateUsd: 0.001,
    });
    await tracker.settle(reservation, { costUsd: 0.0005, inputTokens: 100, outputTokens: 10 });
  }
  return ((performance.now() - started) * 1000) / calls;
}

export async function run(): Promise<void> {
  const calls = Number(flag('calls') ?? 200_000);
  const reps = Number(flag('reps') ?? 5);
  const redisCalls = Number(flag('redis-calls') ?? 2_000);
  const cases: BenchCase[] = [];

  const tracker = new CostTracker({ budgets });
  await baselineLoop(20_000); // warm up both arms
  await ledgerLoop(tracker, 20_000);
  const baseline: number[] = [];
  const ledger: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    baseline.push(await baselineLoop(calls));
    ledger.push(await ledgerLoop(tracker, calls));
  }
  const baselineUs = median(baseline);
  const ledgerUs = median(ledger);
  cases.push({
    name: 'baseline 2× await noop',
    arm: 'baseline',
    load: `${calls} calls`,
    itemsPerSec: 1e6 / baselineUs,
    p50Ms: baselineUs / 1000,
    extra: { usPerCall: baseline },
  });
  cases.push({
    name: 'memory reserve+settle',
    arm: 'memory',
    load: `${calls} calls`,
    itemsPerSec: 1e6 / ledgerUs,
    p50Ms: ledgerUs / 1000,
    extra: { usPerCall: ledger },
  });

  const server = await startRedisServer();
  const redis = new Redis(server.port, '127.0.0.1');
  let redisVersion = 'unknown';
  const latencies: number[] = [];
  try {
    redisVersion = /redis_version:(\S+)/.exec(String(await redis.info('server')))?.[1] ?? redisVersion;
    const shared = new CostTracker({ budgets, store: new RedisBudgetStore({ redis, prefix: '{bench}' }) });
    for (let i = 0; i < 200; i++)
      await shared.settle(await shared.reserve({ tenant: 'warm', estimateUsd: 0.001 }), { costUsd: 0.0005 });
    for (let i = 0; i < redisCalls; i++) {
      const started = performance.now();
      const reservation = await shared.reserve({
        tenant: i & 1 ? 'acme' : 'globex',
        model: 'gpt-4o',
        estimateUsd: 0.001,
      });
      await shared.settle(reservation, { costUsd: 0.0005, inputTokens: 100, outputTokens: 10 });
      latencies.push(performance.now() - started);
    }
  } finally {
    redis.disconnect();
    await server.stop();
  }
  latencies.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  cases.push({
    name: 'redis reserve+settle (loopback)',
    arm: 'redis',
    load: `${redisCalls} sequential`,
    itemsPerSec: 1000 / median(latencies),
    p50Ms: p50,
    p99Ms: p99,
  });

  report({
    suite: 'cost',
    versions: { '@infergate/cost': packageVersion('cost'), 'redis-server': redisVersion },
    cases,
    ratios: {
      memory_ledger_us_per_call: ledgerUs - baselineUs,
      memory_ledger_raw_us_per_call: ledgerUs,
      baseline_us_per_call: baselineUs,
      redis_reserve_settle_p50_ms: p50,
      redis_reserve_settle_p99_ms: p99,
    },
    targets: {
      memory_ledger_us_per_call: '<= 2 (reserve+settle minus baseline)',
      redis_reserve_settle_p99_ms: 'report',
    },
    command: 'pnpm bench cost',
  });
}
