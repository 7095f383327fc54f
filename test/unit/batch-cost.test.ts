import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type InferTransport } from '@infergate/core';
import { costInterceptor, createCostTracker, type SpendEntry } from '@infergate/cost';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ simulatedGpu: { baseMs: 100, perRowMs: 0 } });
});
afterAll(async () => {
  await server.stop();
});

describe('GPU cost through the batcher', () => {
  it('splits one batch execution between tenants by rows', async () => {
    const tracker = createCostTracker({ gpuPrices: [{ model: 'simulated_gpu', usdPerGpuHour: 3600 }] });
    const settled: SpendEntry[] = [];
    tracker.on('settled', (entry) => settled.push(entry));
    const grpc = createTritonClient({ url: server.url }).grpc;
    // Each batch's RPC, timed from inside the batcher's own measurement of it (the batcher times
    // the batch from before it calls the transport to after the answer).
    const rpcNs: bigint[] = [];
    const timed: InferTransport = {
      async infer(request, options) {
        const started = process.hrtime.bigint();
        try {
          return await grpc.infer(request, options);
        } finally {
          rpcNs.push(process.hrtime.bigint() - started);
        }
      },
      stream: (request, options) => grpc.stream(request, options),
    };
    // K = 1: while the first call runs, the rest gather into one batch.
    const batcher = createMicroBatcher(timed, {
      maxInFlightBatches: 1,
      models: { simulated_gpu: { maxBatchSize: 64 } },
    });
    const client = createTritonClient({
      url: server.url,
      transport: batcher,
      interceptors: [costInterceptor({ tracker: tracker })],
    });
    try {
      const call = (tenant: string, rows: number) =>
        client.infer(
          'simulated_gpu',
          [{ name: 'INPUT0', datatype: 'FP32', shape: [rows, 2], data: new Float32Array(rows * 2) }],
          { tenant },
        );
      const warm = call('warm', 1);
      const together = [call('a', 3), call('b', 1)];
      await Promise.all([warm, ...together]);
      expect(batcher.stats().batches).toBe(2);
      const a = settled.find((entry) => entry.tenant === 'a');
      const b = settled.find((entry) => entry.tenant === 'b');
      expect(a?.costUsd).toBeGreaterThan(0);
      // Same execution, 3 rows vs 1 row: a pays three times b (not the whole batch each).
      expect((a?.costUsd ?? 0) / (b?.costUsd ?? 1)).toBeCloseTo(3, 5);
      // $1 per GPU-second: the pair together paid their one execution (the batch's time, which
      // holds its RPC's), not one each. The RPC takes at least the model's 100 ms, far more than
      // what the batcher's own timing adds around it, even on a loaded machine.
      const pairRpcSeconds = Number(rpcNs[1]) / 1e9;
      const paid = (a?.costUsd ?? 0) + (b?.costUsd ?? 0);
      expect(pairRpcSeconds).toBeGreaterThanOrEqual(0.1);
      expect(paid).toBeGreaterThanOrEqual(pairRpcSeconds);
      expect(paid).toBeLessThan(2 * pairRpcSeconds);
    } finally {
      await client.close();
      await batcher.close();
      await grpc.close();
    }
  });
});
