import { createTritonClient, Extension, InfergateError, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer({
    restricted: { groups: ['logging'], header: 'triton-access-token', value: 's3cret' },
  });
  client = createTritonClient({ url: server.url, accessToken: 's3cret' });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

const one = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16) }];
const addSubInputs = [...one, { ...(one[0] as (typeof one)[0]), name: 'INPUT1' }];

describe('model repository', () => {
  it('lists models with their state', async () => {
    const index = await client.repositoryIndex();
    expect(index.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['identity', 'add_sub', 'repeat', 'accumulate']),
    );
    expect(index.find((entry) => entry.name === 'add_sub')?.state).toBe('READY');
  });

  it('unloads and loads a model, with a config override', async () => {
    await client.unloadModel('add_sub');
    expect(await client.modelReady('add_sub')).toBe(false);
    expect((await client.repositoryIndex()).find((entry) => entry.name === 'add_sub')?.state).not.toBe(
      'READY',
    );
    const error = await client.infer('add_sub', addSubInputs).catch((e) => e);
    expect(error).toBeInstanceOf(InfergateError);
    expect(['NOT_FOUND', 'UNAVAILABLE']).toContain(error.code);
    expect(
      (await client.repositoryIndex({ readyOnly: true })).some((entry) => entry.name === 'add_sub'),
    ).toBe(false);

    await client.loadModel('add_sub', { config: { max_batch_size: 4 }, files: { '1/weights.bin': 'abc' } });
    expect(await client.modelReady('add_sub')).toBe(true);
    expect((await client.modelConfig('add_sub')).maxBatchSize).toBe(4);
    const loads = server.repository.loads('add_sub');
    expect(loads.at(-1)?.files?.['1/weights.bin']?.toString()).toBe('abc');
    await client.loadModel('add_sub', { config: { max_batch_size: 64 } });
  });

  it('refuses file overrides without a config, and paths outside the model', async () => {
    await expect(client.loadModel('add_sub', { files: { 'model.py': 'x' } })).rejects.toThrow(
      /need a config override/,
    );
    await expect(client.loadModel('add_sub', { config: {}, files: { '../x': 'x' } })).rejects.toThrow(
      /relative/,
    );
  });
});

describe('statistics', () => {
  it('reports typed counts and durations that grow with inferences', async () => {
    const [before] = await client.modelStatistics('add_sub');
    await client.infer('add_sub', addSubInputs);
    await client.infer('add_sub', addSubInputs);
    const [after] = await client.modelStatistics('add_sub');
    expect(after?.name).toBe('add_sub');
    expect((after?.inferenceCount ?? 0) - (before?.inferenceCount ?? 0)).toBe(2);
    expect((after?.executionCount ?? 0) - (before?.executionCount ?? 0)).toBe(2);
    expect(after?.inference.success.count).toBeGreaterThanOrEqual(2);
    expect(typeof after?.inference.computeInfer.ns).toBe('bigint');
    expect(after?.inference.computeInfer.ms).toBeCloseTo(Number(after?.inference.computeInfer.ns) / 1e6, 6);
    expect(after?.lastInference).toBeInstanceOf(Date);
    expect(after?.batches.find((batch) => batch.batchSize === 1)?.computeInfer.count).toBeGreaterThanOrEqual(
      2,
    );
  });

  it('lists every model when no name is given', async () => {
    const all = await client.modelStatistics();
    expect(all.map((stats) => stats.name)).toEqual(expect.arrayContaining(['identity', 'add_sub']));
  });
});

describe('trace and log settings', () => {
  it('gets and updates trace settings, globally and per model', async () => {
    const initial = await client.traceSettings();
    expect(initial.trace_level).toBeDefined();
    const updated = await client.updateTraceSettings({ trace_level: ['TIMESTAMPS'], trace_rate: 10 });
    expect(updated.trace_level).toEqual(['TIMESTAMPS']);
    expect(updated.trace_rate).toEqual(['10']);
    const perModel = await client.updateTraceSettings({ trace_count: 5 }, { model: 'identity' });
    expect(perModel.trace_count).toEqual(['5']);
    expect((await client.traceSettings({ model: 'identity' })).trace_count).toEqual(['5']);
    expect((await client.traceSettings()).trace_count).not.toEqual(['5']);
  });

  it('gets and updates log settings with the access token; without it the server refuses', async () => {
    const settings = await client.logSettings();
    expect(settings.log_info).toBe(true);
    const updated = await client.updateLogSettings({ log_verbose_level: 2, log_info: false });
    expect(updated.log_verbose_level).toBe(2);
    expect(updated.log_info).toBe(false);
    const noToken = createTritonClient({ url: server.url });
    try {
      const error = await noToken.logSettings().catch((e) => e);
      expect(error).toBeInstanceOf(InfergateError);
      expect(error.message).toMatch(/triton-grpc-protocol-triton-access-token/);
    } finally {
      await noToken.close();
    }
  });
});

describe('feature detection', () => {
  it('reads the extensions the server advertises', async () => {
    expect(await client.supports(Extension.Statistics)).toBe(true);
    expect((await client.extensions()).has(Extension.SystemSharedMemory)).toBe(true);
  });

  it('an unsupported extension is UNIMPLEMENTED naming it', async () => {
    const bare = await startTestServer({ extensions: ['model_configuration'] });
    const bareClient = createTritonClient({ url: bare.url });
    try {
      const stats = await bareClient.modelStatistics('identity').catch((e) => e);
      expect(stats.code).toBe('UNIMPLEMENTED');
      expect(stats.message).toContain("'statistics' extension");
      const sequence = await bareClient.sequence('accumulate').catch((e) => e);
      expect(sequence.code).toBe('UNIMPLEMENTED');
      expect(sequence.message).toContain("'sequence' extension");
      const shm = await bareClient.systemSharedMemoryStatus().catch((e) => e);
      expect(shm.message).toContain("'system_shared_memory' extension");
      const repo = await bareClient.repositoryIndex().catch((e) => e);
      expect(repo.message).toContain("'model_repository' extension");
    } finally {
      await bareClient.close();
      await bare.stop();
    }
  });
});

describe('classification and requested outputs', () => {
  it('returns the top-k classes as BYTES "value:index"', async () => {
    const result = await client.infer(
      'identity',
      [{ name: 'INPUT0', datatype: 'FP32', data: [0.1, 0.7, 0.2, 0.9] }],
      {
        outputs: [{ name: 'OUTPUT0', classCount: 2 }],
      },
    );
    const output = result.output('OUTPUT0');
    expect(output.datatype).toBe('BYTES');
    expect(output.strings().map((entry) => entry.split(':').slice(0, 2).join(':'))).toEqual([
      '0.900000:3',
      '0.700000:1',
    ]);
  });
});
