import { createTritonClient, ErrorCode, InfergateError, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fp32 } from './internal/testing/echo-transport.js';
import { callsArbitrary, sameTensor } from './internal/testing/random-calls.js';
import { createMicroBatcher } from './micro-batcher.js';

describe('against the reference server', () => {
  let server: TestServer;
  let client: TritonClient;

  beforeAll(async () => {
    server = await startTestServer({ simulatedGpu: { baseMs: 1, perRowMs: 0.01, maxBatchSize: 4 } });
    client = createTritonClient({ url: server.url, enableGpuIpc: false });
  });

  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('identity returns each caller its own rows over gRPC (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        callsArbitrary('identity', { inputNames: ['INPUT0'], maxCalls: 24, maxRows: 4 }),
        async (calls) => {
          const batcher = createMicroBatcher(client.grpc, { client, maxInFlightBatches: 1 });
          const responses = await Promise.all(
            calls.map(({ request, tenant }) => batcher.infer(request, { tenant })),
          );
          responses.forEach((response, index) => {
            const input = (calls[index] as (typeof calls)[number]).request.inputs[0];
            expect(input !== undefined && sameTensor(response.outputs[0], input)).toBe(true);
          });
          await batcher.close();
        },
      ),
      { numRuns: 12 },
    );
  });

  it("respects simulated_gpu's max_batch_size read from its model config", async () => {
    const batcher = createMicroBatcher(client.grpc, { client, maxBatchSize: 64, maxInFlightBatches: 1 });
    const batched = createTritonClient({ url: server.url, enableGpuIpc: false, transport: batcher });
    server.gpu.resetStats();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, seed) =>
        batched.infer('simulated_gpu', [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [seed, -seed] },
        ]),
      ),
    );
    results.forEach((result, seed) => {
      expect(Array.from(result.output('OUTPUT0').data as Float32Array)).toEqual([2 * seed, -2 * seed]);
    });
    const stats = server.gpu.stats();
    expect(stats.maxBatchSize).toBe(4);
    expect(stats.executions).toBeLessThan(30);
    await expect(
      batched.infer('simulated_gpu', [
        { name: 'INPUT0', datatype: 'FP32', shape: [5, 1], data: [1, 2, 3, 4, 5] },
      ]),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await batcher.close();
    await batched.close();
  });

  it('fills batches for simulated_gpu at once: the reference server does not claim to merge requests', async () => {
    const batcher = createMicroBatcher(client.grpc, { client });
    const batched = createTritonClient({ url: server.url, enableGpuIpc: false, transport: batcher });
    await batched.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }]);
    // With dynamic_batching in the config, the default `serverBatching: 'measure'` would start eager.
    expect(batcher.stats().lanes.simulated_gpu).toMatchObject({ mode: 'fill', server: 'unknown' });
    await batcher.close();
    await batched.close();
  });

  it('hands a server failure to every member with the same code and the original as cause', async () => {
    const batcher = createMicroBatcher(client.grpc, { maxInFlightBatches: 1 });
    server.faults.set('identity', { code: 'UNAVAILABLE', times: 2, delayMs: 20 });
    const results = await Promise.allSettled(
      [0, 1, 2].map((seed) => batcher.infer({ model: 'identity', inputs: [fp32('INPUT0', 1, 2, seed)] })),
    );
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: ErrorCode.Unavailable });
    }
    const batchError = (results[2] as PromiseRejectedResult).reason as InfergateError;
    expect(batchError.cause).toBeInstanceOf(InfergateError);
    expect((batchError.cause as InfergateError).code).toBe(ErrorCode.Unavailable);
    server.faults.clear();
    await batcher.close();
  });
});
