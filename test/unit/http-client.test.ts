import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SystemSharedMemoryRegion } from '@infergate/core';
import { createHttpClient, ErrorCode, type HttpClient, InfergateError } from '@infergate/core/http';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer({ http: true });
  client = createHttpClient({ url: server.httpUrl });
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
});

describe('HTTP client against the reference server', () => {
  it('answers health and metadata', async () => {
    expect(await client.serverLive()).toBe(true);
    expect(await client.serverReady()).toBe(true);
    expect(await client.modelReady('add_sub')).toBe(true);
    expect(await client.modelReady('no_such_model')).toBe(false);
    const metadata = await client.serverMetadata();
    expect(metadata.name).toBe('infergate-testing');
    expect(metadata.extensions).toContain('binary_tensor_data');
    const model = await client.modelMetadata('add_sub');
    expect(model.inputs.map((input) => input.name)).toEqual(['INPUT0', 'INPUT1']);
  });

  it('infers with binary tensors', async () => {
    const result = await client.infer('add_sub', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(2) },
      { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(0.5) },
    ]);
    expect(Array.from(result.output('OUTPUT0').data as Float32Array)).toEqual(new Array(16).fill(2.5));
    expect(Array.from(result.output('OUTPUT1').data as Float32Array)).toEqual(new Array(16).fill(1.5));
  });

  it('maps an unknown model to NOT_FOUND', async () => {
    const failure = await client
      .infer('no_such_model', [{ name: 'x', datatype: 'FP32', data: [1] }])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InfergateError);
    expect((failure as InfergateError).code).toBe(ErrorCode.NotFound);
    // The statuses real Triton answers with (test/interop/triton-http.test.ts checks them there).
    expect((failure as InfergateError).httpStatus).toBe(404);
    const decoupled = (await client
      .infer('repeat', [{ name: 'IN', datatype: 'INT32', data: [1] }])
      .catch((error: unknown) => error)) as InfergateError;
    expect({ code: decoupled.code, status: decoupled.httpStatus }).toEqual({
      code: ErrorCode.Unimplemented,
      status: 501,
    });
  });

  it('streams generate_stream events', async () => {
    const texts: string[] = [];
    for await (const event of client.generateStream('generate', {
      text_input: 'one two three',
      stream: true,
    })) {
      texts.push(String(event.text_output));
    }
    expect(texts.join('')).toBe('one two three');
  });
});

describe('HTTP client: deadlines, cancellation and faults', () => {
  const input = [{ name: 'INPUT0', datatype: 'INT32' as const, data: [1] }];

  it('a deadline that passes is DEADLINE_EXCEEDED and the server sees the request end', async () => {
    server.reset();
    server.faults.set('identity', { delayMs: 30_000, times: 1 });
    const error = await client.infer('identity', input, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect((error as InfergateError).code).toBe(ErrorCode.DeadlineExceeded);
    await expect.poll(() => server.cancellations('identity'), { timeout: 10_000 }).toBe(1);
    server.faults.clear();
  });

  it('an aborted signal is CANCELLED; an already-aborted one sends nothing', async () => {
    server.reset();
    server.faults.set('identity', { delayMs: 30_000, times: 1 });
    const controller = new AbortController();
    const pending = client.infer('identity', input, { signal: controller.signal });
    await expect.poll(() => server.stats('identity').requests, { timeout: 10_000 }).toBe(1);
    controller.abort();
    expect(((await pending.catch((e: unknown) => e)) as InfergateError).code).toBe(ErrorCode.Cancelled);
    server.faults.clear();
    const before = server.calls.length;
    const again = await client
      .infer('identity', input, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect((again as InfergateError).code).toBe(ErrorCode.Cancelled);
    expect(server.calls.length).toBe(before);
  });

  it('an injected UNAVAILABLE arrives as HTTP 503 and maps back to UNAVAILABLE, retryable', async () => {
    server.faults.set('identity', { code: 'UNAVAILABLE', times: 1 });
    const error = (await client.infer('identity', input).catch((e: unknown) => e)) as InfergateError;
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(error.httpStatus).toBe(503);
    expect(error.retryable).toBe(true);
    expect((await client.infer('identity', input)).output('OUTPUT0').toArray()).toEqual([1]);
  });

  it('a closed client ends calls in flight and refuses new ones', async () => {
    const closing = createHttpClient({ url: server.httpUrl });
    server.faults.set('identity', { delayMs: 30_000, times: 1 });
    const pending = closing.infer('identity', input);
    await expect.poll(() => server.faults.remaining('identity'), { timeout: 10_000 }).toBe(0);
    await closing.close();
    expect(((await pending.catch((e: unknown) => e)) as InfergateError).code).toBe(ErrorCode.Cancelled);
    const refused = (await closing.infer('identity', input).catch((e: unknown) => e)) as InfergateError;
    expect(refused.code).toBe(ErrorCode.FailedPrecondition);
    server.faults.clear();
  });

  it('bad options are INVALID_ARGUMENT naming the field', () => {
    expect(() => createHttpClient({ url: 'triton:8000' })).toThrow(/url/);
    expect(() => createHttpClient({ url: 'http://x', timeoutMs: -1 })).toThrow(InfergateError);
    expect(() => createHttpClient({ url: 'http://x', binaryData: 'yes' as never })).toThrow(/binaryData/);
  });

  it('refuses a response over maxResponseBytes', async () => {
    const small = createHttpClient({ url: server.httpUrl, maxResponseBytes: 1024 });
    const error = (await small
      .infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: new Float32Array(4096) }])
      .catch((e: unknown) => e)) as InfergateError;
    expect(error.code).toBe(ErrorCode.ResourceExhausted);
    await small.close();
  });

  it('a malformed answer is DATA_LOSS, as over gRPC: binary bytes that do not fill the shape, a requested output left out', async () => {
    // A server that answers every inference with one FP32 output of shape [4] but 12 binary bytes,
    // named OUTPUT0.
    const header = Buffer.from(
      JSON.stringify({
        model_name: 'identity',
        model_version: '1',
        outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 12 } }],
      }),
    );
    const liar = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'inference-header-content-length': String(header.byteLength),
          })
          .end(Buffer.concat([header, Buffer.alloc(12)]));
      });
    });
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    const lied = createHttpClient({
      url: `http://127.0.0.1:${(liar.address() as AddressInfo).port}`,
      binaryData: true,
    });
    const failure = async (call: Promise<unknown>) => (await call.catch((e: unknown) => e)) as InfergateError;
    try {
      const input = [{ name: 'INPUT0', datatype: 'FP32' as const, data: new Float32Array(4) }];
      const short = await failure(lied.infer('identity', input));
      expect(short).toBeInstanceOf(InfergateError);
      expect(short.code).toBe(ErrorCode.DataLoss);
      expect(short.message).toMatch(/OUTPUT0.*12 binary bytes for shape \[4\] of FP32/);
      const missing = await failure(lied.infer('identity', input, { outputs: ['OUTPUT1'] }));
      expect(missing).toBeInstanceOf(InfergateError);
      expect(missing.code).toBe(ErrorCode.DataLoss);
    } finally {
      await lied.close();
      await new Promise((resolve) => liar.close(resolve));
    }
  });
});

describe('HTTP client: JSON tensors and management', () => {
  it('JSON tensors (binaryData: false) round-trip every JSON-capable datatype', async () => {
    const json = createHttpClient({ url: server.httpUrl, binaryData: false });
    const cases = [
      { datatype: 'BOOL' as const, data: [true, false], expected: [true, false] },
      { datatype: 'INT64' as const, data: [-(2n ** 40n), 7n], expected: [-(2n ** 40n), 7n] },
      { datatype: 'UINT8' as const, data: [0, 255], expected: [0, 255] },
      { datatype: 'FP64' as const, data: [Math.PI, -1e300], expected: [Math.PI, -1e300] },
      { datatype: 'BYTES' as const, data: ['a', 'héllo'], expected: ['a', 'héllo'] },
    ];
    for (const c of cases) {
      const result = await json.infer(
        'identity',
        [{ name: 'INPUT0', datatype: c.datatype, data: c.data as never }],
        {
          outputs: ['OUTPUT0'],
        },
      );
      expect(result.output('OUTPUT0').toArray()).toEqual(c.expected);
    }
    const fp16 = (await json
      .infer('identity', [{ name: 'INPUT0', datatype: 'FP16', data: [1] }])
      .catch((e: unknown) => e)) as InfergateError;
    expect(fp16.code).toBe(ErrorCode.InvalidArgument);
    await json.close();
  });

  it("'auto' asks the metadata once and uses JSON when the server lacks binary_tensor_data", async () => {
    const plain = await startTestServer({ http: true, extensions: ['model_configuration'] });
    const auto = createHttpClient({ url: plain.httpUrl });
    try {
      expect(
        (await auto.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [3] }]))
          .output('OUTPUT0')
          .toArray(),
      ).toEqual([3]);
      await auto.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [4] }]);
      expect(plain.calls.filter((call) => call.method === 'ServerMetadata')).toHaveLength(1);
      expect(await auto.http.binaryData()).toBe(false);
    } finally {
      await auto.close();
      await plain.stop();
    }
  });

  it('statistics, repository, config, trace and log settings', async () => {
    await client.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [1] }]);
    const [stats] = await client.modelStatistics('identity');
    expect(stats?.inferenceCount).toBeGreaterThan(0);
    expect(typeof stats?.inference.success.ns).toBe('bigint');
    expect((await client.repositoryIndex()).map((model) => model.name)).toContain('add_sub');
    await client.unloadModel('add_sub');
    expect(await client.modelReady('add_sub')).toBe(false);
    await client.loadModel('add_sub');
    expect(await client.modelReady('add_sub')).toBe(true);
    const config = await client.modelConfig('add_sub');
    expect(config).toMatchObject({ name: 'add_sub' });
    expect(await client.updateTraceSettings({ trace_rate: 7 })).toMatchObject({ trace_rate: ['7'] });
    expect(server.traceSettings().trace_rate).toEqual(['7']);
    expect((await client.updateLogSettings({ log_verbose_level: 2 })).log_verbose_level).toBe(2);
    expect(server.logSettings().log_verbose_level).toBe(2);
  });

  it('registers, lists and unregisters a system shared-memory region', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 64 });
    try {
      await client.registerSystemSharedMemory({ name: 'http-region', key: region.key, byteSize: 64 });
      expect(await client.systemSharedMemoryStatus()).toEqual([
        { name: 'http-region', key: region.key, offset: 0, byteSize: 64 },
      ]);
      expect(server.sharedMemoryRegions().map((entry) => entry.name)).toEqual(['http-region']);
      await client.unregisterSystemSharedMemory('http-region');
      expect(await client.systemSharedMemoryStatus()).toEqual([]);
    } finally {
      region.destroy();
    }
  });

  it('checks a region before sending it, as the gRPC client does (INVALID_ARGUMENT)', async () => {
    const refused = async (call: Promise<void>) =>
      ((await call.catch((e: unknown) => e)) as InfergateError).code;
    expect(
      await refused(client.registerSystemSharedMemory({ name: 'r', key: 'no-slash', byteSize: 8 })),
    ).toBe(ErrorCode.InvalidArgument);
    expect(await refused(client.registerSystemSharedMemory({ name: 'r', key: '/k', byteSize: 0 }))).toBe(
      ErrorCode.InvalidArgument,
    );
    const emptyHandle = { name: 'r', rawHandle: new Uint8Array(0), deviceId: 0, byteSize: 8 };
    expect(await refused(client.registerCudaSharedMemory(emptyHandle))).toBe(ErrorCode.InvalidArgument);
    expect(await client.systemSharedMemoryStatus()).toEqual([]);
  });

  it('an endpoint the server lacks is UNIMPLEMENTED naming the extension', async () => {
    const bare = createHttpClient({ url: server.httpUrl.replace(/\/?$/, '/not-triton') });
    const error = (await bare.modelStatistics('identity').catch((e: unknown) => e)) as InfergateError;
    expect(error.code).toBe(ErrorCode.Unimplemented);
    expect(error.details).toEqual({ extension: 'statistics' });
    await bare.close();
  });

  it('generate answers once; generate_stream ends early on break and reports errors as typed', async () => {
    const answer = await client.generate('generate', { text_input: 'a b c', exclude_input_in_output: true });
    expect(answer.text_output).toBe('a b c');
    for await (const event of client.generateStream('generate', { text_input: 'a b c d', stream: true })) {
      expect(event.text_output).toBe('a');
      break;
    }
    const failure = await (async () => {
      for await (const _ of client.generateStream('generate', {
        text_input: 'a',
        stream: true,
        exclude_input_in_output: false,
      })) {
        // the model refuses this combination
      }
    })().catch((e: unknown) => e);
    expect((failure as InfergateError).code).toBe(ErrorCode.InvalidArgument);
  });
});

describe('HTTP port: restricted groups and missing extensions', () => {
  it("a restricted group needs the plain header over HTTP (403 without it), as Triton's --http-restricted-api", async () => {
    const restricted = await startTestServer({
      http: true,
      restricted: { groups: ['trace', 'logging'], header: 'triton-access-token', value: 'secret' },
    });
    const without = createHttpClient({ url: restricted.httpUrl });
    const withToken = createHttpClient({ url: restricted.httpUrl, accessToken: 'secret' });
    try {
      const denied = (await without.logSettings().catch((e: unknown) => e)) as InfergateError;
      expect({ code: denied.code, status: denied.httpStatus }).toEqual({
        code: ErrorCode.PermissionDenied,
        status: 403,
      });
      expect(typeof (await withToken.logSettings()).log_info).toBe('boolean');
      expect(await without.serverLive()).toBe(true);
    } finally {
      await without.close();
      await withToken.close();
      await restricted.stop();
    }
  });

  it('health checks raise a refused credential (403, 401) instead of answering false', async () => {
    const restricted = await startTestServer({
      http: true,
      restricted: { groups: ['health'], header: 'triton-access-token', value: 'secret' },
    });
    // A gateway in front of Triton that wants a bearer token answers 401 to everything.
    const gateway = createServer((_request, response) => {
      response
        .writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' })
        .end('Unauthorized');
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const without = createHttpClient({ url: restricted.httpUrl });
    const withToken = createHttpClient({ url: restricted.httpUrl, accessToken: 'secret' });
    const behindGateway = createHttpClient({
      url: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`,
    });
    const failure = async (call: Promise<boolean>) => {
      const error = (await call.catch((e: unknown) => e)) as InfergateError;
      return { error: error instanceof InfergateError, code: error.code, status: error.httpStatus };
    };
    try {
      const denied = { error: true, code: ErrorCode.PermissionDenied, status: 403 };
      expect(await failure(without.serverLive())).toEqual(denied);
      expect(await failure(without.serverReady())).toEqual(denied);
      expect(await failure(without.modelReady('add_sub'))).toEqual(denied);
      expect(await withToken.serverLive()).toBe(true);
      expect(await withToken.modelReady('no_such_model')).toBe(false);
      const unauthenticated = { error: true, code: ErrorCode.Unauthenticated, status: 401 };
      expect(await failure(behindGateway.serverLive())).toEqual(unauthenticated);
      expect(await failure(behindGateway.serverReady())).toEqual(unauthenticated);
      expect(await failure(behindGateway.modelReady('add_sub'))).toEqual(unauthenticated);
    } finally {
      await without.close();
      await withToken.close();
      await behindGateway.close();
      await new Promise((resolve) => gateway.close(resolve));
      await restricted.stop();
    }
  });

  it('a call of an extension the server does not list is UNIMPLEMENTED naming it', async () => {
    const plain = await startTestServer({ http: true, extensions: [] });
    const bare = createHttpClient({ url: plain.httpUrl });
    try {
      const error = (await bare.modelStatistics('identity').catch((e: unknown) => e)) as InfergateError;
      expect(error.code).toBe(ErrorCode.Unimplemented);
      expect(error.details).toEqual({ extension: 'statistics' });
    } finally {
      await bare.close();
      await plain.stop();
    }
  });
});
