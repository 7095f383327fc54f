import { InfergateError, type InferRequest, type InferTransport } from '@infergate/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServerHandle, startRedisServer } from '../../../test/redis/redis-server.js';
import type { BudgetStore, ReserveRequest } from './budget-store.js';
import { CostTracker } from './cost-tracker.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import { RedisBudgetStore, type RedisLike } from './redis-budget-store.js';
import { costInterceptor } from './triton-cost-interceptor.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const budgets = [{ id: 'daily', scope: ['tenant' as const], window: 'day' as const, hardLimitUsd: 10 }];

/** A memory store whose reserve waits for a gate and ignores the signal, as a slow remote store would. */
function slowStore(held: { opened: Promise<void> }): BudgetStore & { landed: () => number } {
  const inner = new MemoryBudgetStore();
  let landed = 0;
  return {
    landed: () => landed,
    async reserve(request: ReserveRequest) {
      await held.opened;
      landed++;
      return inner.reserve({ ...request, signal: undefined });
    },
    settle: (request) => inner.settle(request),
    release: (id, now) => inner.release(id, now),
    inspect: (lines, now) => inner.inspect(lines, now),
    daily: (from, to) => inner.daily(from, to),
  };
}

const request: InferRequest = {
  model: 'm',
  inputs: [{ name: 'x', datatype: 'FP32', shape: [1], contents: [] }],
} as unknown as InferRequest;
const next: InferTransport = {
  infer: async () => ({ model: 'm', outputs: [] }) as never,
  stream: async function* () {},
};

describe('budget stores take a signal', () => {
  it('the memory store holds nothing for an already aborted call', async () => {
    const tracker = new CostTracker({ budgets });
    const controller = new AbortController();
    controller.abort();
    const error = await tracker
      .reserve({ tenant: 'a', estimateUsd: 1, signal: controller.signal })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe('CANCELLED');
    expect((await tracker.spend('daily', { tenant: 'a' })).reservedUsd).toBe(0);
  });

  it('a call through costInterceptor keeps its deadline when the store is slow, and the late hold is released', async () => {
    const held = gate();
    const store = slowStore(held);
    const tracker = new CostTracker({ budgets, store });
    const transport = costInterceptor({ tracker, estimateUsd: () => 1 })(next);
    const error = await transport
      .infer(request, { tenant: 'a', timeoutMs: 50 })
      .catch((thrown: unknown) => thrown);
    expect((error as InfergateError).code).toBe('DEADLINE_EXCEEDED');
    held.open();
    // The store still reserved after the caller left; the ledger releases it instead of waiting for the TTL.
    await expect.poll(() => store.landed(), { timeout: 5_000 }).toBe(1);
    await expect
      .poll(async () => (await tracker.spend('daily', { tenant: 'a' })).reservedUsd, { timeout: 5_000 })
      .toBe(0);
  });
});

describe('RedisBudgetStore honours the signal (real redis-server)', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer({ persistent: false });
    redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 3 });
  }, 30_000);
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('stops waiting on abort and releases a hold that lands afterwards', async () => {
    const held = gate();
    let completed = 0;
    const slow: RedisLike = {
      call: async (command, args) => {
        await held.opened;
        const reply = await redis.call(command, ...args);
        completed++;
        return reply;
      },
    };
    const store = new RedisBudgetStore({ redis: slow, prefix: '{signal:1}' });
    const observer = new CostTracker({
      budgets,
      store: new RedisBudgetStore({ redis, prefix: '{signal:1}' }),
    });
    const tracker = new CostTracker({ budgets, store });
    const controller = new AbortController();
    const pending = tracker.reserve({ tenant: 'a', estimateUsd: 2, signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' });
    held.open();
    // The reserve script ran after the caller left, then the store released what it held.
    await expect.poll(() => completed, { timeout: 5_000 }).toBe(2);
    expect((await observer.spend('daily', { tenant: 'a' })).reservedUsd).toBe(0);
    // And an aborted signal sends nothing at all.
    const aborted = AbortSignal.abort();
    await expect(tracker.reserve({ tenant: 'a', estimateUsd: 2, signal: aborted })).rejects.toMatchObject({
      code: 'CANCELLED',
    });
  });
});
