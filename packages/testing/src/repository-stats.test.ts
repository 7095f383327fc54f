import { create } from '@bufbuild/protobuf';
import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { GRPCInferenceService } from '@infergate/core/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;
const service = GRPCInferenceService.method;

beforeAll(async () => {
  server = await startTestServer({ simulatedGpu: { baseMs: 5, perRowMs: 0 } });
  client = createTritonClient({ url: server.url });
});

beforeEach(() => server.reset());

afterAll(async () => {
  await client.close();
  await server.stop();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: InfergateError) => error,
  );

describe('model repository', () => {
  it('indexes, unloads and reloads a model', async () => {
    const index = await client.grpc.unary(service.repositoryIndex, create(service.repositoryIndex.input), {});
    expect(index.models.find((m) => m.name === 'add_sub')).toMatchObject({ version: '1', state: 'READY' });
    await client.grpc.unary(
      service.repositoryModelUnload,
      create(service.repositoryModelUnload.input, { modelName: 'add_sub' }),
      {},
    );
    expect(await client.modelReady('add_sub')).toBe(false);
    const error = await failure(client.infer('add_sub', []));
    expect(error?.code).toBe('NOT_FOUND');
    expect(error?.message).toContain("Request for unknown model: 'add_sub' has no available versions");
    const all = await client.grpc.unary(service.repositoryIndex, create(service.repositoryIndex.input), {});
    expect(all.models.find((m) => m.name === 'add_sub')).toMatchObject({
      state: 'UNAVAILABLE',
      reason: 'unloaded',
    });
    const ready = await client.grpc.unary(
      service.repositoryIndex,
      create(service.repositoryIndex.input, { ready: true }),
      {},
    );
    expect(ready.models.some((m) => m.name === 'add_sub')).toBe(false);

    await client.grpc.unary(
      service.repositoryModelLoad,
      create(service.repositoryModelLoad.input, {
        modelName: 'add_sub',
        parameters: {
          config: {
            parameterChoice: {
              case: 'stringParam',
              value: JSON.stringify({ max_batch_size: 4, parameters: { mode: { string_value: 'fast' } } }),
            },
          },
          'file:1/model.onnx': { parameterChoice: { case: 'bytesParam', value: new Uint8Array([1, 2, 3]) } },
        },
      }),
      {},
    );
    expect(await client.modelReady('add_sub')).toBe(true);
    const config = await client.modelConfig('add_sub');
    expect(config.maxBatchSize).toBe(4);
    expect(config.parameters.mode?.stringValue).toBe('fast');
    const [load] = server.repository.loads('add_sub');
    expect(load?.config).toEqual({ max_batch_size: 4, parameters: { mode: { string_value: 'fast' } } });
    expect(Array.from(load?.files['1/model.onnx'] ?? [])).toEqual([1, 2, 3]);
    server.repository.load('add_sub', { max_batch_size: 64 });
  });

  it('rejects unknown load parameters and unknown models', async () => {
    const bad = await failure(
      client.grpc.unary(
        service.repositoryModelLoad,
        create(service.repositoryModelLoad.input, {
          modelName: 'identity',
          parameters: { other: { parameterChoice: { case: 'boolParam', value: true } } },
        }),
        {},
      ),
    );
    expect(bad?.code).toBe('INVALID_ARGUMENT');
    expect(bad?.message).toContain("unrecognized load parameter 'other'.");
    const unknown = await failure(
      client.grpc.unary(
        service.repositoryModelLoad,
        create(service.repositoryModelLoad.input, { modelName: 'x' }),
        {},
      ),
    );
    expect(unknown?.code).toBe('INTERNAL');
  });

  it('unloads composing models with unload_dependents', async () => {
    server.addModel({
      name: 'pipeline',
      inputs: [],
      outputs: [],
      composingModels: ['identity'],
      execute: () => [],
    });
    await client.grpc.unary(
      service.repositoryModelUnload,
      create(service.repositoryModelUnload.input, {
        modelName: 'pipeline',
        parameters: { unload_dependents: { parameterChoice: { case: 'boolParam', value: true } } },
      }),
      {},
    );
    expect(server.repository.isLoaded('pipeline')).toBe(false);
    expect(server.repository.isLoaded('identity')).toBe(false);
    server.repository.load('identity');
    server.removeModel('pipeline');
  });
});

describe('ModelStatistics', () => {
  it('reports measured durations, batch stats and counts', async () => {
    await Promise.all(
      [1, 2, 2].map((rows) =>
        client.infer('simulated_gpu', [
          { name: 'INPUT0', datatype: 'FP32', shape: [rows, 1], data: new Float32Array(rows) },
        ]),
      ),
    );
    await failure(
      client.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] }]),
    );
    const response = await client.grpc.unary(
      service.modelStatistics,
      create(service.modelStatistics.input, { name: 'simulated_gpu' }),
      {},
    );
    const [stats] = response.modelStats;
    expect(stats?.name).toBe('simulated_gpu');
    expect(stats?.version).toBe('1');
    expect(stats?.inferenceCount).toBe(5n);
    expect(stats?.executionCount).toBe(3n);
    expect(stats?.inferenceStats?.success?.count).toBe(3n);
    expect(stats?.inferenceStats?.fail?.count).toBe(1n);
    // Three 5 ms executions on one slot: the later ones queue, all take >= 5 ms of compute.
    expect(Number(stats?.inferenceStats?.computeInfer?.ns)).toBeGreaterThanOrEqual(14e6);
    expect(Number(stats?.inferenceStats?.queue?.ns)).toBeGreaterThan(4e6);
    expect(stats?.batchStats.map((b) => [b.batchSize, b.computeInfer?.count])).toEqual([
      [1n, 1n],
      [2n, 2n],
    ]);
    expect(Number(stats?.lastInference)).toBeGreaterThan(Date.now() - 10_000);
    const all = await client.grpc.unary(service.modelStatistics, create(service.modelStatistics.input), {});
    expect(all.modelStats.map((s) => s.name)).toContain('identity');
    const unknown = await failure(
      client.grpc.unary(service.modelStatistics, create(service.modelStatistics.input, { name: 'nope' }), {}),
    );
    expect(unknown?.code).toBe('NOT_FOUND');
  });
});

describe('accumulate (sequence batcher)', () => {
  const step = (value: number, parameters: Record<string, string | number | boolean>) =>
    client.infer('accumulate', [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }], {
      parameters,
    });

  it('keeps a running sum per sequence and frees it at the end', async () => {
    expect((await step(5, { sequence_id: 42, sequence_start: true })).output('OUTPUT').toArray()).toEqual([
      5,
    ]);
    expect(
      (await step(3, { sequence_id: 'other', sequence_start: true })).output('OUTPUT').toArray(),
    ).toEqual([3]);
    expect((await step(2, { sequence_id: 42 })).output('OUTPUT').toArray()).toEqual([7]);
    expect(server.activeSequences('accumulate')).toBe(2);
    expect((await step(1, { sequence_id: 42, sequence_end: true })).output('OUTPUT').toArray()).toEqual([8]);
    expect(server.activeSequences('accumulate')).toBe(1);
    const error = await failure(step(1, { sequence_id: 42 }));
    expect(error?.code).toBe('INVALID_ARGUMENT');
    expect(error?.message).toContain(
      "inference request for sequence 42 to model 'accumulate' must specify the START flag on the first request of the sequence",
    );
  });

  it('requires a correlation ID and reports sequence batching in its config', async () => {
    const error = await failure(step(1, {}));
    expect(error?.message).toContain(
      "inference request to model 'accumulate' must specify a non-zero or non-empty correlation ID",
    );
    const config = await client.modelConfig('accumulate');
    expect(config.schedulingChoice.case).toBe('sequenceBatching');
    expect(config.maxBatchSize).toBe(8);
  });
});

describe('classification', () => {
  it('returns the top-k "value:index:label" strings per batch row', async () => {
    server.addModel({
      name: 'scores',
      maxBatchSize: 4,
      inputs: [{ name: 'X', datatype: 'FP32', dims: [3] }],
      outputs: [{ name: 'P', datatype: 'FP32', dims: [3] }],
      labels: { P: ['cat', 'dog', 'eel'] },
      execute: (request) => [
        { ...request.input('X'), name: 'P', data: request.input('X').data as Float32Array },
      ],
    });
    const result = await client.infer(
      'scores',
      [{ name: 'X', datatype: 'FP32', shape: [2, 3], data: [0.1, 0.7, 0.2, 0.5, 0.25, 0.25] }],
      { outputs: [{ name: 'P', classCount: 2 }] },
    );
    const output = result.output('P');
    expect(output.datatype).toBe('BYTES');
    expect(output.shape).toEqual([2, 2]);
    expect(output.strings()).toEqual([
      '0.700000:1:dog',
      '0.200000:2:eel',
      '0.500000:0:cat',
      '0.250000:1:dog',
    ]);
    server.removeModel('scores');
  });
});
