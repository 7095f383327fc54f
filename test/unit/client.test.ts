import { createServer } from 'node:net';
import {
  createTritonClient,
  DATATYPES,
  type DataType,
  InfergateError,
  type TritonClient,
} from '@infergate/core';
import { type ExecuteRequest, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: TritonClient;
let seen: ExecuteRequest | undefined;

beforeAll(async () => {
  server = await startTestServer({
    models: [
      {
        name: 'echo_params',
        inputs: [{ name: 'INPUT0', datatype: 'INT32', dims: [-1] }],
        outputs: [
          { name: 'OUTPUT0', datatype: 'INT32', dims: [-1] },
          { name: 'OUTPUT1', datatype: 'INT32', dims: [-1] },
        ],
        execute(request) {
          seen = request;
          const input = request.input('INPUT0');
          return [
            { name: 'OUTPUT0', datatype: 'INT32', shape: input.shape, raw: input.raw },
            { name: 'OUTPUT1', datatype: 'INT32', shape: input.shape, raw: input.raw },
          ];
        },
      },
    ],
  });
  client = createTritonClient({ url: server.url, timeoutMs: 10_000 });
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
    expect(error).toBeInstanceOf(InfergateError);
    return (error as InfergateError).code;
  }
}

const samples: Record<Exclude<DataType, 'BYTES'>, readonly (number | bigint | boolean)[]> = {
  BOOL: [true, false],
  UINT8: [0, 255],
  UINT16: [1, 65535],
  UINT32: [1, 4294967295],
  UINT64: [1n, 18446744073709551615n],
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  INT64: [-9223372036854775808n, 9223372036854775807n],
  FP16: [0.5, -65504],
  BF16: [0.5, -3],
  FP32: [0.25, -(2 ** 90)],
  FP64: [Math.E, -1e300],
};

describe('health and metadata', () => {
  it('answers live, ready, server and model metadata, and config', async () => {
    expect(await client.serverLive()).toBe(true);
    expect(await client.serverReady()).toBe(true);
    expect(await client.modelReady('add_sub')).toBe(true);
    expect(await client.modelReady('nope')).toBe(false);
    const metadata = await client.serverMetadata();
    expect(metadata.name).toBe('infergate-testing');
    const model = await client.modelMetadata('add_sub');
    expect(model.inputs.map((input) => input.name)).toEqual(['INPUT0', 'INPUT1']);
    expect(model.inputs[0]?.shape).toEqual([-1, 16]);
    const config = await client.modelConfig('add_sub');
    expect(config.maxBatchSize).toBe(64);
    expect(config.input.map((input) => input.name)).toEqual(['INPUT0', 'INPUT1']);
  });
});

describe('identity round trips', () => {
  for (const datatype of DATATYPES.filter((d) => d !== 'BYTES') as Exclude<DataType, 'BYTES'>[]) {
    it(`${datatype}`, async () => {
      const values = samples[datatype];
      const result = await client.infer('identity', [
        { name: 'INPUT0', datatype, shape: [2], data: values as number[] },
      ]);
      const output = result.output('OUTPUT0');
      expect(output.datatype).toBe(datatype);
      expect(output.shape).toEqual([2]);
      expect(output.toArray()).toEqual(values);
    });
  }

  it('every datatype is covered', () => {
    expect(Object.keys(samples).length + 1).toBe(DATATYPES.length);
  });

  it('BYTES with empty, unicode and binary elements', async () => {
    const binary = Buffer.from([0, 1, 255, 0, 128]);
    const result = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'BYTES', shape: [2, 2], data: ['', 'naïve — ✓ 日本', binary, 'x'] },
    ]);
    const output = result.output('OUTPUT0');
    expect(output.shape).toEqual([2, 2]);
    const elements = output.data as Buffer[];
    expect(elements[0]?.length).toBe(0);
    expect(elements[1]?.toString('utf8')).toBe('naïve — ✓ 日本');
    expect(Buffer.compare(elements[2] as Buffer, binary)).toBe(0);
    expect(output.strings()[3]).toBe('x');
  });

  it('0-d and empty tensors', async () => {
    const scalar = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'INT64', shape: [], data: [42n] },
    ]);
    expect(scalar.output('OUTPUT0').shape).toEqual([]);
    expect(scalar.output('OUTPUT0').toArray()).toEqual([42n]);
    const empty = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [0, 8], data: [] },
    ]);
    expect(empty.output('OUTPUT0').shape).toEqual([0, 8]);
    expect((empty.output('OUTPUT0').data as Float32Array).length).toBe(0);
  });

  it('a 64 MiB FP32 tensor', async () => {
    const count = (64 * 1024 * 1024) / 4;
    const data = new Float32Array(count);
    for (let i = 0; i < count; i += 4096) data[i] = i;
    data[count - 1] = -7.5;
    const result = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [count], data },
    ]);
    const output = result.output('OUTPUT0').data as Float32Array;
    expect(output.length).toBe(count);
    expect(output[4096 * 100]).toBe(4096 * 100);
    expect(output[count - 1]).toBe(-7.5);
    expect(
      Buffer.compare(
        Buffer.from(output.buffer, output.byteOffset, output.byteLength),
        Buffer.from(data.buffer),
      ),
    ).toBe(0);
  }, 60_000);
});

describe('inference options', () => {
  it('computes add_sub', async () => {
    const a = Float32Array.from({ length: 32 }, (_, i) => i);
    const b = new Float32Array(32).fill(1);
    const result = await client.infer('add_sub', [
      { name: 'INPUT0', datatype: 'FP32', shape: [2, 16], data: a },
      { name: 'INPUT1', datatype: 'FP32', shape: [2, 16], data: b },
    ]);
    expect(Array.from(result.output('OUTPUT0').data as Float32Array)).toEqual(Array.from(a, (x) => x + 1));
    expect(Array.from(result.output('OUTPUT1').data as Float32Array)).toEqual(Array.from(a, (x) => x - 1));
  });

  it('sends request id, parameters, priority, server timeout and the requested outputs only', async () => {
    const result = await client.infer('echo_params', [{ name: 'INPUT0', datatype: 'INT32', data: [1, 2] }], {
      requestId: 'req-7',
      outputs: ['OUTPUT1'],
      parameters: { flag: true, label: 'x', count: 3, ratio: 0.5 },
      priority: 2,
      timeoutUs: 5000,
    });
    expect(result.id).toBe('req-7');
    expect(result.outputs.map((output) => output.name)).toEqual(['OUTPUT1']);
    expect(seen?.parameters).toMatchObject({
      flag: true,
      label: 'x',
      count: 3,
      ratio: 0.5,
      priority: 2,
      timeout: 5000,
    });
  });

  it('sends per-call and client headers as metadata', async () => {
    const withHeaders = createTritonClient({ url: server.url, headers: { 'x-client': 'a' } });
    try {
      await withHeaders.infer('identity', [{ name: 'INPUT0', datatype: 'INT8', data: [1] }], {
        headers: { 'x-call': 'b' },
      });
      const call = server.calls.filter((recorded) => recorded.method === 'ModelInfer').at(-1);
      expect(call?.metadata).toMatchObject({ 'x-client': 'a', 'x-call': 'b' });
    } finally {
      await withHeaders.close();
    }
  });
});

describe('errors', () => {
  it('unknown model is NOT_FOUND, naming the model', async () => {
    const error = await client
      .infer('missing_model', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }])
      .catch((e) => e);
    expect(error).toBeInstanceOf(InfergateError);
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain('missing_model');
    expect(error.endpoint).toBe(server.url);
  });

  it('a datatype the model does not take is INVALID_ARGUMENT from the server', async () => {
    const error = await client
      .infer('add_sub', [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
        { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) },
      ])
      .catch((e) => e);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/datatype/);
  });

  it('shape and byte mismatches are caught before the network', async () => {
    const before = server.calls.length;
    expect(
      await codeOf(
        client.infer('add_sub', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: [1, 2, 3] }]),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await codeOf(
        client.infer('identity', [
          { name: 'INPUT0', datatype: 'FP64', shape: [2], data: new Uint8Array(12) },
        ]),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await codeOf(
        client.infer('identity', [
          { name: 'INPUT0', datatype: 'FP32', data: [1] },
          { name: 'INPUT0', datatype: 'FP32', data: [1] },
        ]),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(server.calls.length).toBe(before);
  });

  it('a missing output asked of the result is NOT_FOUND listing the outputs', async () => {
    const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
    expect(() => result.output('NOPE')).toThrow(/no output 'NOPE' \(outputs: OUTPUT0\)/);
  });

  it('a deadline that passes is DEADLINE_EXCEEDED', async () => {
    const before = server.cancellations('fail');
    // The server would answer after a minute: only the 100 ms deadline can end this call.
    const code = await codeOf(
      client.infer('fail', [], { parameters: { fail_code: 0, delay_ms: 60_000 }, timeoutMs: 100 }),
    );
    expect(code).toBe('DEADLINE_EXCEEDED');
    await expect.poll(() => server.cancellations('fail')).toBe(before + 1);
  });

  it('an abort is CANCELLED, and the server sees the cancellation', async () => {
    const before = server.cancellations('fail');
    const controller = new AbortController();
    const pending = client.infer('fail', [], {
      parameters: { fail_code: 0, delay_ms: 60_000 },
      signal: controller.signal,
    });
    // Abort once the server is running the call, not after a guessed delay.
    await expect.poll(() => server.stats('fail').inFlight).toBe(1);
    controller.abort();
    expect(await codeOf(pending)).toBe('CANCELLED');
    await expect.poll(() => server.cancellations('fail')).toBe(before + 1);
  });

  it('an already-aborted signal fails without a call', async () => {
    const before = server.calls.length;
    expect(
      await codeOf(
        client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }], {
          signal: AbortSignal.abort(),
        }),
      ),
    ).toBe('CANCELLED');
    expect(server.calls.length).toBe(before);
  });

  it('chosen server statuses keep their codes', async () => {
    expect(await codeOf(client.infer('fail', [], { parameters: { fail_code: 14 } }))).toBe('UNAVAILABLE');
    expect(await codeOf(client.infer('fail', [], { parameters: { fail_code: 8 } }))).toBe(
      'RESOURCE_EXHAUSTED',
    );
    expect(
      await codeOf(
        client.infer('fail', [], {
          parameters: { fail_code: 14, fail_message: 'Exceeds maximum queue size' },
        }),
      ),
    ).toBe('QUEUE_FULL');
  });

  it('a server that is down is UNAVAILABLE', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const down = createTritonClient({ url: `127.0.0.1:${port}`, timeoutMs: 3000 });
    try {
      const error = await down.serverLive().catch((e) => e);
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.retryable).toBe(true);
    } finally {
      await down.close();
    }
  });

  it('a server killed mid-call is UNAVAILABLE', async () => {
    const victim = await startTestServer();
    const victimClient = createTritonClient({ url: victim.url });
    try {
      const pending = victimClient.infer('fail', [], { parameters: { fail_code: 0, delay_ms: 60_000 } });
      await expect.poll(() => victim.stats('fail').inFlight).toBe(1);
      victim.kill();
      expect(await codeOf(pending)).toBe('UNAVAILABLE');
    } finally {
      await victimClient.close();
      await victim.stop();
    }
  });

  it('a closed client refuses calls', async () => {
    const closing = createTritonClient({ url: server.url });
    await closing.close();
    expect(await codeOf(closing.serverLive())).toBe('FAILED_PRECONDITION');
  });
});
