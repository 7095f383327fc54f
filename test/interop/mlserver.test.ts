// @infergate/core against MLServer 1.7.1, a second KServe v2 server (base protocol only).
// The `doubler` model (mlserver/repo/doubler) returns OUTPUT0 = 2 * INPUT0 (FP32).
import { createTritonClient, InfergateError, type TritonClient } from '@infergate/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MlserverHandle, startMlserver } from './mlserver/mlserver-harness.js';

let server: MlserverHandle;
let client: TritonClient;

beforeAll(async () => {
  server = await startMlserver();
  // enableGpuIpc stays on (the default): MLServer lists no system_shared_memory, so nothing is staged.
  client = createTritonClient({ url: server.grpcAddress });
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
});

afterEach((context) => {
  if (context.task.result?.state === 'fail' && server) {
    console.error(`--- MLServer log tail after '${context.task.name}' ---\n${server.logTail(40)}`);
  }
});

async function caught(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    return error as InfergateError;
  }
  throw new Error('expected the call to fail');
}

const input = (values: number[], shape?: number[]) => [
  { name: 'INPUT0', datatype: 'FP32' as const, data: Float32Array.from(values), ...(shape ? { shape } : {}) },
];

describe('MLServer 1.7.1 (KServe v2 base protocol)', () => {
  it('health and metadata', async () => {
    expect(await client.serverLive()).toBe(true);
    expect(await client.serverReady()).toBe(true);
    expect(await client.modelReady('doubler')).toBe(true);
    expect(await client.serverMetadata()).toEqual({ name: 'mlserver', version: '1.7.1', extensions: [] });
    expect(await client.supports('statistics')).toBe(false);
    expect(await client.modelMetadata('doubler')).toEqual({
      name: 'doubler',
      versions: [],
      platform: '',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1] }],
    });
  });

  it('infer with raw tensors; the request id comes back', async () => {
    const result = await client.infer('doubler', input([1, 2.5, -3]), { requestId: 'ml-1' });
    expect(result.id).toBe('ml-1');
    expect(result.model).toBe('doubler');
    const output = result.output('OUTPUT0');
    expect(output.datatype).toBe('FP32');
    expect(output.toArray()).toEqual([2, 5, -6]);
    // MLServer's NumpyCodec gives a 1-d array a second dimension, and labels the content type.
    expect(output.shape).toEqual([3, 1]);
    expect(output.parameters).toEqual({ content_type: 'np' });
    const square = await client.infer('doubler', input([1, 2, 3, 4], [2, 2]), { outputs: ['OUTPUT0'] });
    expect(square.output('OUTPUT0').shape).toEqual([2, 2]);
    expect(square.output('OUTPUT0').toArray()).toEqual([2, 4, 6, 8]);
  });

  it('a 2 MiB input goes over plain gRPC: the automatic shared-memory path stays off', async () => {
    const values = Array.from({ length: 512 * 1024 }, (_, i) => i % 1000);
    const output = (await client.infer('doubler', input(values))).output('OUTPUT0');
    expect(output.shape).toEqual([values.length, 1]);
    expect((output.data as Float32Array)[999]).toBe(1998);
    expect(client.grpc.sharedMemory?.regionCount ?? 0).toBe(0);
  });

  it("a request over MLServer's 4 MiB gRPC limit fails, and not as retryable backpressure", async () => {
    const error = await caught(client.infer('doubler', input(new Array(1024 * 1024).fill(1))));
    expect(error.rawMessage).toContain('Received message larger than max');
    // gRPC says RESOURCE_EXHAUSTED; retrying the same request can never succeed.
    expect(error.retryable).toBe(false);
    expect(error.backpressure).toBe(false);
  });

  it('an unknown model is NOT_FOUND', async () => {
    const error = await caught(client.infer('no_such_model', input([1])));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.rawMessage).toContain('Model no_such_model with version  not found');
  });

  it('repository: index, unload, load', async () => {
    // MLServer 1.7.1 writes the state as Python's str(enum): "State.READY".
    expect(await client.repositoryIndex()).toEqual([
      { name: 'doubler', version: '1', state: 'State.READY', reason: '' },
    ]);
    await client.unloadModel('doubler');
    try {
      expect((await client.repositoryIndex())[0]?.state).toBe('State.UNAVAILABLE');
      expect((await caught(client.infer('doubler', input([1])))).code).toBe('NOT_FOUND');
      // MLServer answers ModelReady for an unloaded model with an error, not `ready: false`.
      const notReady = await client.modelReady('doubler').catch((e: InfergateError) => e);
      expect(notReady === false || notReady instanceof InfergateError).toBe(true);
    } finally {
      await client.loadModel('doubler');
    }
    expect(await client.modelReady('doubler')).toBe(true);
    expect((await client.infer('doubler', input([21]))).output('OUTPUT0').toArray()).toEqual([42]);
  });

  it('Triton-only calls fail with UNIMPLEMENTED naming the missing extension', async () => {
    const cases: [string, () => Promise<unknown>][] = [
      ['statistics', () => client.modelStatistics('doubler')],
      ['trace', () => client.traceSettings()],
      ['trace', () => client.updateTraceSettings({ trace_rate: 1 })],
      ['logging', () => client.logSettings()],
      ['logging', () => client.updateLogSettings({ log_info: true })],
      ['system_shared_memory', () => client.systemSharedMemoryStatus()],
      [
        'system_shared_memory',
        () => client.registerSystemSharedMemory({ name: 'r', key: '/r', byteSize: 64 }),
      ],
      ['system_shared_memory', () => client.unregisterSystemSharedMemory()],
      ['cuda_shared_memory', () => client.cudaSharedMemoryStatus()],
      ['sequence', () => client.sequence('doubler')],
    ];
    for (const [extension, call] of cases) {
      const error = await caught(call());
      expect(error.code).toBe('UNIMPLEMENTED');
      expect(error.details).toEqual({ extension });
      expect(error.rawMessage).toContain(`'${extension}' extension`);
    }
  });

  it('modelConfig() (Triton model_configuration) fails with UNIMPLEMENTED naming the extension', async () => {
    const error = await caught(client.modelConfig('doubler'));
    expect(error.code).toBe('UNIMPLEMENTED');
    expect(error.details).toEqual({ extension: 'model_configuration' });
  });
});
