import { create } from '@bufbuild/protobuf';
import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigDataType, GRPCInferenceService } from './internal/proto.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer({ serverVersion: '9.9.9', extensions: ['model_configuration'] });
  client = createTritonClient({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (error) {
    return (error as InfergateError).code;
  }
}

/** Bounded wait for server-side state (expect.poll's bound from vitest.config.ts). */
const waitFor = (condition: () => boolean) => expect.poll(condition).toBe(true);

describe('server RPCs', () => {
  it('listens on 127.0.0.1 and reports liveness, readiness and metadata', async () => {
    expect(server.url).toBe(`127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    expect(await client.serverLive()).toBe(true);
    expect(await client.serverReady()).toBe(true);
    expect(await client.serverMetadata()).toEqual({
      name: 'infergate-testing',
      version: '9.9.9',
      extensions: ['model_configuration'],
    });
  });

  it('reports model readiness (false for unknown models and versions)', async () => {
    expect(await client.modelReady('identity')).toBe(true);
    expect(await client.modelReady('identity', { version: '1' })).toBe(true);
    expect(await client.modelReady('identity', { version: '2' })).toBe(false);
    expect(await client.modelReady('nope')).toBe(false);
  });

  it('reports model metadata with the batch dimension', async () => {
    expect(await client.modelMetadata('add_sub')).toEqual({
      name: 'add_sub',
      versions: ['1'],
      platform: 'infergate_test',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'FP32', shape: [-1, 16] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'FP32', shape: [-1, 16] },
        { name: 'OUTPUT1', datatype: 'FP32', shape: [-1, 16] },
      ],
    });
    expect((await codeOf(client.modelMetadata('nope'))) as string).toBe('NOT_FOUND');
  });

  it('builds a real ModelConfig', async () => {
    const config = await client.modelConfig('add_sub');
    expect(config.name).toBe('add_sub');
    expect(config.maxBatchSize).toBe(64);
    expect(config.input.map((input) => [input.name, input.dataType, input.dims])).toEqual([
      ['INPUT0', ConfigDataType.TYPE_FP32, [16n]],
      ['INPUT1', ConfigDataType.TYPE_FP32, [16n]],
    ]);
    // Every request runs as its own execution, so no dynamic_batching is claimed.
    expect(config.schedulingChoice.case).toBeUndefined();
    const fail = await client.modelConfig('fail');
    expect(fail.maxBatchSize).toBe(0);
    expect(fail.schedulingChoice.case).toBeUndefined();
    expect(await codeOf(client.modelConfig('nope'))).toBe('NOT_FOUND');
  });

  it('answers UNIMPLEMENTED for RPCs it does not serve yet', async () => {
    const method = GRPCInferenceService.method.repositoryIndex;
    expect(await codeOf(client.grpc.unary(method, create(method.input), {}))).toBe('UNIMPLEMENTED');
  });
});

describe('recorded calls', () => {
  it('records method, model and metadata such as traceparent', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }], {
      headers: { traceparent, 'x-tenant': 'acme' },
    });
    const call = server.calls.at(-1);
    expect(call?.method).toBe('ModelInfer');
    expect(call?.model).toBe('identity');
    expect(call?.metadata.traceparent).toBe(traceparent);
    expect(call?.metadata['x-tenant']).toBe('acme');
    expect(call?.time).toBeLessThanOrEqual(Date.now());
    await client.serverLive();
    expect(server.calls.at(-1)).toMatchObject({ method: 'ServerLive', model: undefined });
  });
});

describe('user models', () => {
  afterEach(() => server.removeModel('scale'));

  it('serves a registered function, with config extras, until removed', async () => {
    server.addModel({
      name: 'scale',
      versions: ['1', '2'],
      inputs: [{ name: 'X', datatype: 'FP64', dims: [-1] }],
      outputs: [
        { name: 'Y', datatype: 'FP64', dims: [-1] },
        { name: 'INFO', datatype: 'BYTES', dims: [1] },
      ],
      config: { backend: 'python', metricTags: { team: 'ml' } },
      execute(request) {
        const x = request.input('X').data as Float64Array;
        const factor = Number(request.parameters.factor ?? 1);
        return [
          {
            name: 'Y',
            datatype: 'FP64',
            shape: request.input('X').shape,
            data: x.map((value) => value * factor),
          },
          {
            name: 'INFO',
            datatype: 'BYTES',
            shape: [1],
            data: [`v${request.version} ${request.metadata['x-who']}`],
          },
        ];
      },
    });
    const result = await client.infer('scale', [{ name: 'X', datatype: 'FP64', data: [1, 2] }], {
      parameters: { factor: 3 },
      headers: { 'x-who': 'me' },
    });
    expect(result.output('Y').toArray()).toEqual([3, 6]);
    expect(result.output('INFO').strings()).toEqual(['v2 me']);
    const config = await client.modelConfig('scale');
    expect(config.backend).toBe('python');
    expect(config.metricTags).toEqual({ team: 'ml' });
    expect(server.executions('scale')).toBe(1);
    expect(server.removeModel('scale')).toBe(true);
    expect(await codeOf(client.infer('scale', [{ name: 'X', datatype: 'FP64', data: [1] }]))).toBe(
      'NOT_FOUND',
    );
  });

  it('answers INTERNAL when a model throws or returns a bad output', async () => {
    server.addModel({
      name: 'scale',
      inputs: [],
      outputs: [{ name: 'Y', datatype: 'FP32', dims: [1] }],
      execute: (request) => {
        if (request.parameters.crash === true) throw new Error('boom');
        return [{ name: 'Y', datatype: 'FP32', shape: [2], data: [1] }];
      },
    });
    expect(await codeOf(client.infer('scale', [], { parameters: { crash: true } }))).toBe('INTERNAL');
    expect(await codeOf(client.infer('scale', []))).toBe('INTERNAL');
  });
});

describe('cancellation', () => {
  it('aborts the execution signal and counts a client cancellation', async () => {
    let aborted = false;
    server.addModel({
      name: 'slow',
      inputs: [],
      outputs: [],
      execute: (_request, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          });
        }),
    });
    const controller = new AbortController();
    const call = client.infer('slow', [], { signal: controller.signal });
    await waitFor(() => server.stats('slow').inFlight === 1);
    controller.abort();
    expect(await codeOf(call)).toBe('CANCELLED');
    await waitFor(() => aborted);
    expect(server.cancellations('slow')).toBe(1);
  });

  it('counts a passed deadline as a cancellation', async () => {
    const before = server.cancellations('fail');
    const code = await codeOf(client.infer('fail', [], { timeoutMs: 50, parameters: { delay_ms: 5000 } }));
    expect(code).toBe('DEADLINE_EXCEEDED');
    await waitFor(() => server.cancellations('fail') === before + 1);
    expect(server.stats('fail').inFlight).toBe(0);
  });
});

describe('lifecycle', () => {
  it('holds calls while paused and answers them on resume', async () => {
    server.pause();
    expect(await codeOf(client.serverLive({ timeoutMs: 50 }))).toBe('DEADLINE_EXCEEDED');
    const held = client.serverReady();
    // Resume once the held call has reached the server (it records every call it receives).
    await waitFor(() => server.calls.at(-1)?.method === 'ServerReady');
    server.resume();
    expect(await held).toBe(true);
  });

  it('kill drops connections and restart serves again on the same port', async () => {
    const own = await startTestServer();
    const port = own.port;
    const ownClient = createTritonClient({ url: own.url });
    try {
      expect(await ownClient.serverLive()).toBe(true);
      const inFlight = codeOf(ownClient.infer('fail', [], { parameters: { delay_ms: 5000 } }));
      await waitFor(() => own.stats('fail').inFlight === 1);
      own.kill();
      expect(await inFlight).toBe('UNAVAILABLE');
      expect(own.listening).toBe(false);
      await own.restart();
      expect(own.port).toBe(port);
      // Each client has connections of its own (core sets grpc-js's `grpc.use_local_subchannel_pool`):
      // with grpc-js's process-wide pool, a client made now could be handed ownClient's connection
      // to the killed server in the turn before grpc-js has read its close, and its first call would
      // fail there ("Connection dropped"), whatever the restarted server does.
      const fresh = createTritonClient({ url: own.url });
      expect(await fresh.serverLive()).toBe(true);
      await fresh.close();
    } finally {
      await ownClient.close();
      await own.stop();
      await own.stop();
    }
  });

  it('stop lets a call finish, is idempotent, and refuses new calls', async () => {
    // The call lasts a second (long enough to be seen in flight); the grace is far longer.
    const own = await startTestServer({ stopGraceMs: 30_000 });
    const ownClient = createTritonClient({ url: own.url });
    try {
      const inFlight = ownClient.infer('fail', [], { parameters: { fail_code: 0, delay_ms: 1000 } });
      await waitFor(() => own.stats('fail').inFlight === 1);
      const stopping = own.stop();
      expect(own.stop()).toBe(stopping);
      expect((await inFlight).output('OUTPUT0').shape).toEqual([0]);
      await stopping;
      expect(await codeOf(ownClient.serverLive({ timeoutMs: 500 }))).toBe('UNAVAILABLE');
    } finally {
      await ownClient.close();
    }
  });
});
