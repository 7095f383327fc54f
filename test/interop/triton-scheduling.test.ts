// Scheduling on slow_queue: priority, queue full, server-side timeout.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import { InfergateError } from '@infergate/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';
import { caught, sleep, slowInput } from './triton-helpers.js';

const { client } = sharedTritonClients();

// These tests space their requests 30 ms apart. A process's first call waits for core's gRPC wire
// code (loaded after import, see packages/core/src/internal/lazy-modules.ts): make it before them,
// so that none of their requests waits and the spacing holds.
beforeAll(async () => {
  await client.serverLive();
});

// ── scheduling: priority, queue full, server-side timeout ──────────────────────────────────

describe('scheduling on slow_queue (200 ms, one at a time, queue of 2 per priority level)', () => {
  it('a priority-1 request overtakes a queued default-priority (2) one', async () => {
    const order: string[] = [];
    const run = (tag: string, priority?: number) =>
      client
        .infer('slow_queue', slowInput(), priority !== undefined ? { priority } : {})
        .then(() => order.push(tag));
    const busy = [run('busy-1')];
    await sleep(30);
    busy.push(run('busy-2')); // the dynamic batcher stages one request for the busy instance
    await sleep(30);
    const low = run('low');
    await sleep(30);
    const high = run('high', 1);
    await Promise.all([...busy, low, high]);
    expect(order.indexOf('high')).toBeLessThan(order.indexOf('low'));
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
    const busy = [client.infer('slow_queue', slowInput())];
    await sleep(30);
    busy.push(client.infer('slow_queue', slowInput()));
    await sleep(30);
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
