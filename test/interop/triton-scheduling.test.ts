// Scheduling on slow_queue: priority, queue full, server-side timeout.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import { InfergateError } from '@infergate/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTriton, sharedTritonClients } from './shared-triton.js';
import { caught, reachesPending, slowInput } from './triton-helpers.js';

const { client } = sharedTritonClients();

// These tests place requests in slow_queue's scheduler one after another, each once Triton's pending
// count (its metrics) shows the one before in place, not after a fixed sleep. A process's first call
// waits for core's gRPC wire code (loaded after import, see packages/core/src/internal/lazy-modules.ts):
// make it before them.
beforeAll(async () => {
  await client.serverLive();
});

const metrics = () => sharedTriton().metricsAddress;

// ── scheduling: priority, queue full, server-side timeout ──────────────────────────────────

describe('scheduling on slow_queue (200 ms, one at a time, queue of 2 per priority level)', () => {
  it('a priority-1 request overtakes a queued default-priority (2) one', async () => {
    // One request runs (200 ms) while the other busy one, then `low`, then `high` wait behind it.
    // Triton picks the next request when the running one ends: `high` must be waiting by then, which
    // the pending count proves (3 waiting). A try where the machine was too slow
    // to see that is run again, at most three times.
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const order: string[] = [];
      const run = (tag: string, priority?: number) =>
        client
          .infer('slow_queue', slowInput(), priority !== undefined ? { priority } : {})
          .then(() => order.push(tag));
      const calls = [run('busy-1'), run('busy-2')];
      let inPlace = await reachesPending(metrics(), 'slow_queue', 1);
      if (inPlace) {
        calls.push(run('low'));
        inPlace = await reachesPending(metrics(), 'slow_queue', 2);
      }
      if (inPlace) {
        calls.push(run('high', 1));
        inPlace = await reachesPending(metrics(), 'slow_queue', 3);
      }
      await Promise.all(calls);
      if (inPlace) {
        expect(order.indexOf('high')).toBeLessThan(order.indexOf('low'));
        expect(order).toHaveLength(4);
        return;
      }
    }
    throw new Error('three tries could not queue low and high behind a running request (machine too slow?)');
  });

  it('a burst of 8 overflows the queue: QUEUE_FULL with backpressure, the rest succeed', async () => {
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, () => client.infer('slow_queue', slowInput())),
    );
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as InfergateError] : []));
    const successes = settled.length - failures.length;
    expect(successes).toBeGreaterThanOrEqual(2);
    expect(failures.length).toBeGreaterThanOrEqual(3);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(InfergateError);
      expect(failure.code).toBe('QUEUE_FULL');
      expect(failure.backpressure).toBe(true);
      expect(failure.retryable).toBe(true);
      expect(failure.model).toBe('slow_queue');
      expect(failure.rawMessage).toContain('Exceeds maximum queue size');
    }
  });

  it('timeoutUs: a request that waits longer than its server-side timeout fails with DEADLINE_EXCEEDED', async () => {
    const busy = [client.infer('slow_queue', slowInput()), client.infer('slow_queue', slowInput())];
    // One runs, one waits: a third waits at least until the first ends (up to 200 ms).
    expect(await reachesPending(metrics(), 'slow_queue', 1)).toBe(true);
    const error = await caught(client.infer('slow_queue', slowInput(), { timeoutUs: 1000 }));
    await Promise.all(busy);
    // The queue policy's default is 10 s and the two requests ahead take 400 ms: only the 1 ms override
    // can expire it in the queue (Triton's own message says so; no client clock needed).
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    expect(error.rawMessage).toContain('Request timeout expired');
    // Without the override the same request is served.
    await expect(client.infer('slow_queue', slowInput(), { timeoutUs: 5_000_000 })).resolves.toBeDefined();
  });
});
