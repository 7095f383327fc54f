// @infergate/model-config against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU):
// the multi-tenant preset's server side is loaded with a config override (and a Python identity
// model as a file override), read back with modelConfig(), compared, checked against the client
// side, and called through a batcher built from the client side. See README.md in this folder.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type TritonClient } from '@infergate/core';
import {
  checkMultiTenantPreset,
  createMultiTenantPreset,
  lintModelConfig,
  modelConfigToJson,
  printModelConfig,
} from '@infergate/model-config';
import { run } from '@infergate/model-config/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printLogTailOnFailure, sharedTriton } from './shared-triton.js';

const MODEL = 'infergate_tenants';
const IDENTITY_PY = `import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())]
            )
            for r in requests
        ]
`;

const preset = createMultiTenantPreset({
  model: {
    name: MODEL,
    backend: 'python',
    input: [{ name: 'INPUT0', dataType: 'FP32', dims: [-1] }],
    output: [{ name: 'OUTPUT0', dataType: 'FP32', dims: [-1] }],
    instanceGroup: [{ kind: 'KIND_CPU', count: 1 }],
  },
  // Generous targets: the machine running the suite is busy, and these calls must not time out.
  tenants: {
    interactive: { weight: 4, latencyTargetMs: 5_000, maxQueue: 16 },
    standard: { weight: 2, latencyTargetMs: 20_000, maxQueue: 64 },
    batch: { weight: 1, latencyTargetMs: 60_000, maxQueue: 256 },
  },
});

let client: TritonClient;

printLogTailOnFailure();

beforeAll(async () => {
  client = createTritonClient({ url: sharedTriton().grpcAddress, enableGpuIpc: false });
  await client.loadModel(MODEL, {
    config: modelConfigToJson(preset.server),
    files: { '1/model.py': IDENTITY_PY },
  });
});

const dir = mkdtempSync(join(tmpdir(), 'infergate-model-config-interop-'));

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await client?.unloadModel(MODEL).catch(() => {});
  await client?.close();
});

describe('multi-tenant preset on real Triton', () => {
  it('Triton loads the generated config and returns it as generated', async () => {
    const live = await client.modelConfig(MODEL);
    expect(live.name).toBe(MODEL);
    expect(live.maxBatchSize).toBe(64);
    expect(live.schedulingChoice.case).toBe('dynamicBatching');
    if (
      live.schedulingChoice.case !== 'dynamicBatching' ||
      preset.server.schedulingChoice.case !== 'dynamicBatching'
    ) {
      return;
    }
    const [sent, got] = [preset.server.schedulingChoice.value, live.schedulingChoice.value];
    expect(got.priorityLevels).toBe(sent.priorityLevels);
    expect(got.defaultPriorityLevel).toBe(sent.defaultPriorityLevel);
    expect(got.maxQueueDelayMicroseconds).toBe(sent.maxQueueDelayMicroseconds);
    expect(got.defaultQueuePolicy).toEqual(sent.defaultQueuePolicy);
    expect(got.priorityQueuePolicy).toEqual(sent.priorityQueuePolicy);
    expect(live.instanceGroup[0]?.rateLimiter).toEqual(preset.server.instanceGroup[0]?.rateLimiter);
    expect(live.input.map((input) => [input.name, input.dims])).toEqual([['INPUT0', [-1n]]]);
  });

  it('the live config matches the client side and passes lint', async () => {
    const live = await client.modelConfig(MODEL);
    expect(checkMultiTenantPreset({ server: live, client: preset.client })).toEqual([]);
    expect(lintModelConfig(live, { latencyBudgetMs: 5_000, gpus: 0, streamingClient: false })).toEqual([]);
    // What Triton added (defaults it fills in) prints as a config.pbtxt too.
    expect(printModelConfig(live)).toContain('priority_levels: 3');
  });

  it('tenants call through a batcher built from the client side, at their priorities', async () => {
    const batcher = createMicroBatcher(client.grpc, { ...preset.client.batcher, client });
    const batched = createTritonClient({
      url: sharedTriton().grpcAddress,
      enableGpuIpc: false,
      transport: batcher,
    });
    try {
      const calls = Object.values(preset.client.tenants).map(async (settings, index) => {
        const data = Float32Array.from([index, index + 0.5]);
        const result = await batched.infer(
          MODEL,
          [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data }],
          settings,
        );
        return result.output('OUTPUT0').toArray();
      });
      expect(await Promise.all(calls)).toEqual([
        [0, 0.5],
        [1, 1.5],
        [2, 2.5],
      ]);
      // A priority above the levels the server has is refused by the batcher before it reaches Triton.
      await expect(
        batched.infer(
          MODEL,
          [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: Float32Array.from([1]) }],
          {
            priority: 4,
          },
        ),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      await batcher.close({ drain: true });
      await batched.close();
    }
  });
});

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

describe('infergate model-config diff/apply against real Triton', () => {
  it('diff: the generated file matches the live config; an edited one shows each changed field', async () => {
    const url = sharedTriton().grpcAddress;
    const generated = join(dir, 'generated.pbtxt');
    writeFileSync(generated, printModelConfig(preset.server));
    const same = await cli('diff', generated, '--url', url);
    expect(same).toMatchObject({ code: 0, stderr: '' });
    expect(same.stdout).toContain(`the server runs '${MODEL}' as configured`);

    const edited = join(dir, 'edited.pbtxt');
    writeFileSync(
      edited,
      printModelConfig(preset.server)
        .replace('max_queue_delay_microseconds: 10000', 'max_queue_delay_microseconds: 2000')
        .replace('max_queue_size: 16', 'max_queue_size: 8'),
    );
    const changed = await cli('diff', edited, '--url', url);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(
      `~ dynamic_batching.max_queue_delay_microseconds: ${edited} has 2000, the server has 10000`,
    );
    expect(changed.stdout).toContain(
      `~ dynamic_batching.priority_queue_policy[1].max_queue_size: ${edited} has 8, the server has 16`,
    );
    expect(changed.stdout).toContain('2 difference(s)');
    // Over HTTP the live config comes in Triton's JSON form; read back, it gives the same diff.
    const overHttp = await cli('diff', edited, '--url', sharedTriton().httpAddress, '--protocol', 'http');
    expect(overHttp).toEqual(changed);
  });

  it('apply: loads the edited file as an override, then the live config matches it', async () => {
    const url = sharedTriton().grpcAddress;
    const edited = join(dir, 'applied.pbtxt');
    writeFileSync(
      edited,
      printModelConfig(preset.server).replace('max_queue_size: 16', 'max_queue_size: 12'),
    );
    // The model is not in the server's repository (it came as a file override): send its file again.
    const modelPy = join(dir, 'model.py');
    writeFileSync(modelPy, IDENTITY_PY);
    const applied = await cli('apply', edited, '--url', url, '--file', `1/model.py=${modelPy}`);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`loaded '${MODEL}' with ${edited} as its config`);
    const batching = (await client.modelConfig(MODEL)).schedulingChoice;
    expect(batching.case === 'dynamicBatching' && batching.value.priorityQueuePolicy[1]?.maxQueueSize).toBe(
      12,
    );
    expect((await cli('diff', edited, '--url', url)).code).toBe(0);
  });
});
