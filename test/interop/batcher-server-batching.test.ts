// The micro-batcher in front of real Triton's add_sub (PyTriton, dynamic batching): it reads the
// model's dynamic_batching from the config, reads Triton's statistics for the `measure` rule, and
// every batch it sends is one request Triton counts. Counts and states only, never timings.
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printLogTailOnFailure, sharedTriton } from './shared-triton.js';

let base: TritonClient;

beforeAll(() => {
  base = createTritonClient({ url: sharedTriton().grpcAddress, enableGpuIpc: false });
});

afterAll(async () => {
  await base.close();
});

printLogTailOnFailure();

async function requestsServed(client: TritonClient): Promise<number> {
  const [stats] = await client.modelStatistics('add_sub');
  return stats?.inference.success.count ?? 0;
}

describe('batcher against a Triton that batches', () => {
  it('reads dynamic batching and statistics; Triton sees one request per batch; answers are per caller', async () => {
    const batcher = createMicroBatcher(base.grpc, { client: base, statsIntervalMs: 1 });
    const client = createTritonClient({
      url: sharedTriton().grpcAddress,
      enableGpuIpc: false,
      transport: batcher,
    });
    try {
      const before = await requestsServed(base);
      const workers = 16;
      const calls = 40;
      let wrong = 0;
      const worker = async (id: number) => {
        for (let call = 0; call < calls; call++) {
          const a = new Float32Array(16).fill(id * 1000 + call);
          const b = new Float32Array(16).fill(1);
          const response = await client.infer('add_sub', [
            { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: a },
            { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: b },
          ]);
          const sum = response.outputs.find((output) => output.name === 'OUTPUT0');
          const values = sum?.data as Float32Array | undefined;
          if (values?.[0] !== id * 1000 + call + 1 || values.length !== 16) wrong += 1;
        }
      };
      await Promise.all(Array.from({ length: workers }, (_, id) => worker(id)));
      expect(wrong).toBe(0);
      const stats = batcher.stats();
      expect(stats.items).toBe(workers * calls);
      expect(stats.passedThrough).toBe(0);
      // Triton counted exactly the batches (no bisection here: nothing failed). Polled: Triton
      // counts a request after sending its response.
      await expect.poll(async () => (await requestsServed(base)) - before).toBe(stats.rpcs);
      expect(stats.rpcs).toBe(stats.batches);
      const lane = stats.lanes.add_sub;
      // The config's dynamic_batching was read (a model without it would start in fill mode and
      // never be judged), and the statistics were read at least twice (a verdict needs a delta).
      expect(lane?.server).toMatch(/^(idle|saturated)$/);
      if (lane?.server === 'saturated') expect(lane.mode).toBe('fill');
    } finally {
      await batcher.close();
      await client.close();
    }
  }, 120_000);
});
