// Health, metadata, config, statistics and the model repository.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import { createTritonClient, InfergateError } from '@infergate/core';
import { createHttpClient } from '@infergate/core/http';
import { describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';
import { caught, slowInput } from './triton-helpers.js';

const { client, triton } = sharedTritonClients(async ({ client }) => {
  // The repository tests unload and reload repo_identity and put it back as the repository has it;
  // if one failed half-way, reload it from the repository so later files see the usual server.
  try {
    const ready = await client.modelReady('repo_identity').catch(() => false);
    const config = ready ? await client.modelConfig('repo_identity') : undefined;
    if (!ready || config?.parameters.infergate_override !== undefined) {
      await client.unloadModel('repo_identity').catch(() => {});
      await client.loadModel('repo_identity');
    }
  } catch {
    /* the tests already report what went wrong */
  }
});

// ── health, metadata, config, statistics ──────────────────────────────────────────────────

describe('health, metadata, config and statistics', () => {
  it('health and server metadata', async () => {
    expect(await client.serverLive()).toBe(true);
    expect(await client.serverReady()).toBe(true);
    expect(await client.modelReady('identity_fp32')).toBe(true);
    expect(await client.modelReady('identity_fp32', { version: '1' })).toBe(true);
    const metadata = await client.serverMetadata();
    expect(metadata.name).toBe('triton');
    expect(metadata.version).toBe('2.51.0');
    for (const extension of [
      'classification',
      'sequence',
      'model_repository',
      'statistics',
      'trace',
      'logging',
    ])
      expect(metadata.extensions).toContain(extension);
    expect(await client.supports('system_shared_memory')).toBe(true);
    await expect(client.requireExtension('cuda_shared_memory', 'test')).resolves.toBeUndefined();
    await expect(client.requireExtension('no_such_extension', 'test')).rejects.toMatchObject({
      code: 'UNIMPLEMENTED',
    });
  });

  it('request options: id, version, custom parameters, requested outputs, client deadline', async () => {
    const sixteen = Float32Array.from({ length: 16 }, (_, i) => i);
    const result = await client.infer(
      'add_sub',
      [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: sixteen },
        { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: sixteen },
      ],
      {
        requestId: 'opts-1',
        modelVersion: '1',
        parameters: { note: 'x', n: 3, flag: true },
        outputs: ['OUTPUT1'],
      },
    );
    expect(result.id).toBe('opts-1');
    expect(result.modelVersion).toBe('1');
    expect(result.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    // timeoutMs is the gRPC deadline (tritonclient's client_timeout).
    const late = await caught(client.infer('slow_queue', slowInput(), { timeoutMs: 50 }));
    expect(late.code).toBe('DEADLINE_EXCEEDED');
    // slow_queue runs one request at a time, in order: once a later request is served, the abandoned
    // one has finished too and leaves nothing behind for the next test.
    expect((await client.infer('slow_queue', slowInput(2))).output('OUTPUT0').toArray()).toEqual([2]);
  });

  it('a deadline beyond 2^31 − 1 ms, or Infinity (none), does not end the call early, on every transport', async () => {
    // setTimeout fires a delay over 2^31 − 1 ms after 1 ms: such a deadline failed the call at once.
    const grpcJs = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false, engine: 'grpc-js' });
    const http = createHttpClient({ url: `http://${triton.httpAddress}` });
    try {
      for (const timeoutMs of [3e9, 1e15, Number.POSITIVE_INFINITY]) {
        for (const [name, transport] of [
          ['http2', client],
          ['grpc-js', grpcJs],
          ['http', http],
        ] as const) {
          const result = await transport.infer('slow_queue', slowInput(3), { timeoutMs });
          expect([name, timeoutMs, result.output('OUTPUT0').toArray()]).toEqual([name, timeoutMs, [3]]);
        }
      }
    } finally {
      await grpcJs.close();
      await http.close();
    }
  });

  it('an unknown model is reported by name', async () => {
    const ready = await client.modelReady('no_such_model').catch((e: InfergateError) => e);
    expect(ready === false || (ready instanceof InfergateError && ready.code !== 'UNKNOWN')).toBe(true);
    const error = await caught(client.infer('no_such_model', slowInput()));
    expect(error.rawMessage).toContain('no_such_model');
    expect(error.model).toBe('no_such_model');
  });

  it('model metadata and config are typed', async () => {
    const metadata = await client.modelMetadata('identity_bf16');
    expect(metadata).toEqual({
      name: 'identity_bf16',
      versions: ['1'],
      platform: 'python',
      inputs: [{ name: 'INPUT0', datatype: 'BF16', shape: [-1] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'BF16', shape: [-1] }],
    });
    const slow = await client.modelConfig('slow_queue');
    expect(slow.name).toBe('slow_queue');
    expect(slow.maxBatchSize).toBe(1);
    expect(slow.schedulingChoice.case).toBe('dynamicBatching');
    if (slow.schedulingChoice.case === 'dynamicBatching') {
      const batching = slow.schedulingChoice.value;
      expect(batching.priorityLevels).toBe(2n);
      expect(batching.defaultQueuePolicy?.maxQueueSize).toBe(2);
      expect(batching.defaultQueuePolicy?.allowTimeoutOverride).toBe(true);
    }
    expect((await client.modelConfig('repeat')).modelTransactionPolicy?.decoupled).toBe(true);
    expect((await client.modelConfig('accumulate')).schedulingChoice.case).toBe('sequenceBatching');
  });

  it('statistics count the inferences made', async () => {
    const before = (await client.modelStatistics('add_sub'))[0];
    const sixteen = Float32Array.from({ length: 16 }, (_, i) => i);
    const inputs = [
      { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 16], data: sixteen },
      { name: 'INPUT1', datatype: 'FP32' as const, shape: [1, 16], data: sixteen },
    ];
    for (let i = 0; i < 3; i += 1) {
      const result = await client.infer('add_sub', inputs);
      expect(result.output('OUTPUT0').toArray()[5]).toBe(10);
      expect(result.output('OUTPUT1').toArray()[5]).toBe(0);
    }
    expect(before).toBeDefined();
    if (before === undefined) return;
    // Triton records statistics when it releases a request, which can come after the client has its
    // response: poll (bounded) until all three are counted.
    const counted = async () => {
      const [now] = await client.modelStatistics('add_sub');
      return [
        (now?.inferenceCount ?? 0) - before.inferenceCount,
        (now?.inference.success.count ?? 0) - before.inference.success.count,
      ];
    };
    await expect.poll(counted).toEqual([3, 3]);
    const [after] = await client.modelStatistics('add_sub');
    expect(after).toBeDefined();
    if (after === undefined) return;
    expect(after.name).toBe('add_sub');
    expect(after.version).toBe('1');
    expect(after.inferenceCount - before.inferenceCount).toBe(3);
    expect(after.inference.success.count - before.inference.success.count).toBe(3);
    expect(after.executionCount).toBeGreaterThan(before.executionCount);
    expect(after.lastInference).toBeInstanceOf(Date);
    expect(typeof after.inference.computeInfer.ns).toBe('bigint');
    expect(after.inference.computeInfer.ns).toBeGreaterThan(before.inference.computeInfer.ns);
    expect(after.batches.find((b) => b.batchSize === 1)?.computeInfer.count).toBeGreaterThanOrEqual(3);
    const all = await client.modelStatistics();
    expect(all.map((s) => s.name)).toEqual(expect.arrayContaining(['add_sub', 'identity_fp32', 'repeat']));
  });
});

// ── repository ────────────────────────────────────────────────────────────────────────────

describe('model repository (repo_identity)', () => {
  const fp32 = (values: number[]) => [{ name: 'INPUT0', datatype: 'FP32' as const, data: values }];
  const config = {
    name: 'repo_identity',
    backend: 'python',
    max_batch_size: 0,
    input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    parameters: { infergate_override: { string_value: 'yes' } },
  };

  it('index, unload, load with a config override, load again from the repository', async () => {
    const index = await client.repositoryIndex();
    expect(index.length).toBeGreaterThanOrEqual(21);
    expect(index.find((m) => m.name === 'repo_identity')).toMatchObject({ version: '1', state: 'READY' });

    await client.unloadModel('repo_identity');
    expect(await client.modelReady('repo_identity')).toBe(false);
    const unloaded = (await client.repositoryIndex()).find((m) => m.name === 'repo_identity');
    expect(['UNLOADING', 'UNAVAILABLE']).toContain(unloaded?.state);
    expect((await client.repositoryIndex({ readyOnly: true })).some((m) => m.name === 'repo_identity')).toBe(
      false,
    );
    await expect(client.infer('repo_identity', fp32([1]))).rejects.toBeInstanceOf(InfergateError);

    await client.loadModel('repo_identity', { config });
    expect(await client.modelReady('repo_identity')).toBe(true);
    expect((await client.modelConfig('repo_identity')).parameters.infergate_override?.stringValue).toBe(
      'yes',
    );
    expect((await client.infer('repo_identity', fp32([1, 2]))).output('OUTPUT0').toArray()).toEqual([1, 2]);

    // A plain load of a loaded model is a no-op in Triton 2.51 (the override stays); unload first.
    await client.loadModel('repo_identity');
    expect((await client.modelConfig('repo_identity')).parameters.infergate_override?.stringValue).toBe(
      'yes',
    );
    await client.unloadModel('repo_identity', { unloadDependents: true });
    await client.loadModel('repo_identity');
    expect((await client.modelConfig('repo_identity')).parameters.infergate_override).toBeUndefined();
    expect(await client.modelReady('repo_identity')).toBe(true);
  });

  it('load with file overrides (config + 1/model.py) runs the uploaded code', async () => {
    const doubling = `import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", x * 2)]))
        return out
`;
    const run = async () => (await client.infer('repo_identity', fp32([1, 2.5]))).output('OUTPUT0').toArray();
    try {
      // The loaded config differs from `config` (the repository's has no parameters): Triton reloads.
      await client.loadModel('repo_identity', { config, files: { '1/model.py': doubling } });
      expect(await run()).toEqual([2, 5]);
      // Triton 2.51 does not reload when the config override equals the loaded config: new files are ignored.
      const tripling = doubling.replace('x * 2', 'x * 3');
      await client.loadModel('repo_identity', { config, files: { '1/model.py': tripling } });
      expect(await run()).toEqual([2, 5]);
    } finally {
      await client.unloadModel('repo_identity');
      await client.loadModel('repo_identity');
    }
    expect(await run()).toEqual([1, 2.5]);
  });
});
