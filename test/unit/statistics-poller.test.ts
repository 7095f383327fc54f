import { createStatisticsPoller, createTritonClient, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type InMemoryMetrics, installInMemoryMetrics } from './otel-metrics.js';

let server: TestServer;
let client: TritonClient;
let meters: InMemoryMetrics;

beforeAll(async () => {
  meters = installInMemoryMetrics();
  server = await startTestServer({ simulatedGpu: { baseMs: 2, perRowMs: 0 } });
  client = createTritonClient({ url: server.url });
});
afterAll(async () => {
  await client.close();
  await server.stop();
  await meters.uninstall();
});

describe('statistics poller', () => {
  it('reports Triton’s queue and compute time and counts per model, as the server states them', async () => {
    for (const rows of [1, 3])
      await client.infer('simulated_gpu', [
        { name: 'INPUT0', datatype: 'FP32', shape: [rows, 2], data: new Float32Array(rows * 2) },
      ]);
    const poller = createStatisticsPoller({ client, models: ['simulated_gpu'] });
    try {
      await poller.poll();
      expect(poller.lastError).toBeUndefined();
      const [stats] = await client.modelStatistics('simulated_gpu');
      const collected = await meters.collect();
      const value = (name: string) => collected.get(name)?.dataPoints[0];
      expect(value('infergate.triton.inferences')?.value).toBe(4);
      expect(value('infergate.triton.executions')?.value).toBe(2);
      expect(value('infergate.triton.inferences')?.attributes).toEqual({
        'infergate.model': 'simulated_gpu',
        'infergate.model.version': stats?.version,
      });
      expect(collected.get('infergate.triton.compute.duration')?.descriptor.unit).toBe('s');
      expect(value('infergate.triton.compute.duration')?.value).toBeGreaterThan(0);
      expect(value('infergate.triton.queue.duration')?.value).toBeGreaterThanOrEqual(0);
    } finally {
      poller.close();
    }
  });

  it('keeps a failed poll in lastError and never rejects', async () => {
    const poller = createStatisticsPoller({ client, models: ['no_such_model'] });
    try {
      await expect(poller.poll()).resolves.toBeUndefined();
      expect(poller.lastError?.code).toBe('NOT_FOUND');
    } finally {
      poller.close();
    }
  });

  it('polls at an intervalMs beyond 2^31 − 1 ms once per period, not every millisecond', async () => {
    // A fake client: only the timer is under test.
    const modelStatistics = vi.fn(async () => []);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    const poller = createStatisticsPoller({ client: { modelStatistics } as never, intervalMs: 3e9 });
    try {
      await vi.advanceTimersByTimeAsync(3e9 - 1);
      expect(modelStatistics).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(modelStatistics).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(3e9);
      expect(modelStatistics).toHaveBeenCalledTimes(2);
    } finally {
      poller.close();
      vi.useRealTimers();
    }
  });

  it('refuses to poll more often than once a second', () => {
    expect(() => createStatisticsPoller({ client, intervalMs: 100 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});
