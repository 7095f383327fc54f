// The HTTP/REST transport (@infergate/core/http) against the interop run's one real Triton's HTTP
// port, byte for byte against tritonclient.http: the binary tensor extension for every datatype
// (BYTES included), JSON tensors, management calls, error codes, generate and generate_stream.
import {
  createTritonClient,
  type DataType,
  SystemSharedMemoryRegion,
  type TritonClient,
} from '@infergate/core';
import { createHttpClient, ErrorCode, type HttpClient } from '@infergate/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printLogTailOnFailure, type SharedTritonInfo, sharedTriton, tritonIsUp } from './shared-triton.js';
import { caught } from './triton-helpers.js';
import { type HttpProbeResult, probeTritonclientHttp } from './tritonclient-http-probe.js';
import { b64hex, hex, probeValue } from './tritonclient-probe.js';

let triton: SharedTritonInfo;
let http: HttpClient;
let grpc: TritonClient;
/** Every request body the HTTP client sent, with its headers (through the `fetch` option). */
const sent: { url: string; headers: Headers; body: Uint8Array }[] = [];

beforeAll(() => {
  triton = sharedTriton();
  http = createHttpClient({
    url: `http://${triton.httpAddress}`,
    fetch: async (url, init) => {
      const body =
        init.body instanceof Uint8Array ? init.body : new TextEncoder().encode(String(init.body ?? ''));
      sent.push({ url, headers: new Headers(init.headers), body });
      return fetch(url, init);
    },
  });
  grpc = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false });
});

afterAll(async () => {
  await http?.close();
  await grpc?.close();
});

printLogTailOnFailure();

const lastSent = () => sent[sent.length - 1] as (typeof sent)[number];

/** Splits a body at its JSON header (Inference-Header-Content-Length, or all of it). */
function split(body: Uint8Array, headerLength: number | null | undefined) {
  const end = headerLength ?? body.byteLength;
  return { json: JSON.parse(new TextDecoder().decode(body.subarray(0, end))), binary: body.subarray(end) };
}

interface Case {
  datatype: Exclude<DataType, 'BYTES' | 'BF16'>;
  values: (number | bigint | boolean)[];
  decoded?: (number | bigint | boolean)[];
}

const CASES: Case[] = [
  { datatype: 'BOOL', values: [true, false, true] },
  { datatype: 'UINT8', values: [0, 1, 255] },
  { datatype: 'UINT16', values: [0, 0x8000, 0xffff] },
  { datatype: 'UINT32', values: [0, 2 ** 31, 2 ** 32 - 1] },
  { datatype: 'UINT64', values: [0n, 2n ** 63n, 2n ** 64n - 1n] },
  { datatype: 'INT8', values: [-128, 0, 127] },
  { datatype: 'INT16', values: [-32768, 0, 32767] },
  { datatype: 'INT32', values: [-(2 ** 31), 0, 2 ** 31 - 1] },
  { datatype: 'INT64', values: [-(2n ** 63n), 0n, 2n ** 63n - 1n] },
  { datatype: 'FP16', values: [0, -0, 1.5, 65504, Number.POSITIVE_INFINITY, NaN] },
  {
    datatype: 'FP32',
    values: [0, -0, 0.1, 3.4028234663852886e38, Number.NEGATIVE_INFINITY, NaN],
    decoded: [0, -0, Math.fround(0.1), 3.4028234663852886e38, Number.NEGATIVE_INFINITY, NaN],
  },
  { datatype: 'FP64', values: [0, -0, Math.PI, Number.MAX_VALUE, Number.MIN_VALUE, NaN] },
];

const BYTES: (string | Uint8Array)[] = [
  '',
  'hello',
  'héllo ✓ 日本語 🚀',
  '\u0000',
  new Uint8Array([0, 255, 0, 10, 13, 0x80, 0xfe]),
  'x'.repeat(100_000),
];
const bytesOf = (element: string | Uint8Array) =>
  typeof element === 'string' ? new TextEncoder().encode(element) : element;
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('binary tensor data, every datatype, against tritonclient.http', () => {
  let reference: HttpProbeResult[];

  beforeAll(async () => {
    if (!tritonIsUp()) return;
    reference = await probeTritonclientHttp(triton.httpAddress, [
      ...CASES.map((c) => ({
        model_name: `identity_${c.datatype.toLowerCase()}`,
        inputs: [
          {
            name: 'INPUT0',
            datatype: c.datatype,
            shape: [c.values.length],
            values: c.values.map(probeValue),
          },
        ],
      })),
      {
        model_name: 'identity_bytes',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'BYTES',
            shape: [BYTES.length],
            data_b64_list: BYTES.map((e) => b64(bytesOf(e))),
          },
        ],
      },
    ]);
  });

  const check = async (
    index: number,
    model: string,
    datatype: DataType,
    data: (number | bigint | boolean | string | Uint8Array)[],
  ) => {
    const ref = reference[index] as HttpProbeResult;
    expect(ref.error).toBeUndefined();
    const result = await http.infer(model, [{ name: 'INPUT0', datatype, data: data as number[] }]);
    const request = lastSent();
    const headerLength = Number(request.headers.get('inference-header-content-length'));
    const ours = split(request.body, headerLength);
    // The tensor bytes we POST are tritonclient's, byte for byte; the JSON headers say the same.
    expect(hex(ours.binary)).toBe(b64hex(ref.request.binary_b64));
    expect(ours.json).toEqual(ref.request.json);
    const output = result.output('OUTPUT0');
    expect(output.datatype).toBe(datatype);
    expect(output.shape).toEqual([data.length]);
    // What Triton answered us is what it answered tritonclient, and what tritonclient decoded.
    expect(hex(output.raw)).toBe(b64hex(ref.response?.binary_b64));
    expect(hex(output.raw)).toBe(b64hex(ref.response?.outputs[0]?.raw_b64));
    return output;
  };

  for (const [index, c] of CASES.entries()) {
    it(`${c.datatype}: request and response bytes equal tritonclient.http's`, async () => {
      const output = await check(index, `identity_${c.datatype.toLowerCase()}`, c.datatype, c.values);
      expect(output.toArray()).toEqual(c.decoded ?? c.values);
    });
  }

  it("BYTES: empty, unicode, NUL, binary and 100 kB elements equal tritonclient.http's", async () => {
    const output = await check(CASES.length, 'identity_bytes', 'BYTES', BYTES);
    expect((output.data as Uint8Array[]).map((element) => hex(element))).toEqual(
      BYTES.map((e) => hex(bytesOf(e))),
    );
    expect(output.strings()[2]).toBe('héllo ✓ 日本語 🚀');
  });

  it('BF16 over HTTP returns the bytes gRPC returns', async () => {
    const input = {
      name: 'INPUT0',
      datatype: 'BF16' as const,
      data: [0, -0, 1.5, Math.E, -1e30, Number.POSITIVE_INFINITY],
    };
    const viaHttp = (await http.infer('identity_bf16', [input])).output('OUTPUT0');
    const viaGrpc = (await grpc.infer('identity_bf16', [input])).output('OUTPUT0');
    expect(hex(viaHttp.raw)).toBe(hex(viaGrpc.raw));
    expect(viaHttp.toArray()).toEqual(viaGrpc.toArray());
  });
});

describe('JSON tensors (a server without the binary extension) against tritonclient.http', () => {
  const jsonCases: { datatype: DataType; values: (number | boolean | string)[] }[] = [
    { datatype: 'BOOL', values: [true, false] },
    { datatype: 'INT32', values: [-(2 ** 31), 7] },
    { datatype: 'INT64', values: [-(2 ** 53) + 1, 2 ** 53 - 1] },
    { datatype: 'FP32', values: [0.5, -2.25] },
    { datatype: 'FP64', values: [Math.PI, -1e300] },
    { datatype: 'BYTES', values: ['plain', 'héllo ✓'] },
  ];

  it('sends the data arrays tritonclient sends and decodes what Triton answers the same way', async () => {
    const json = createHttpClient({
      url: `http://${triton.httpAddress}`,
      binaryData: false,
      fetch: http.http.options.fetch as never,
    });
    try {
      const reference = await probeTritonclientHttp(
        triton.httpAddress,
        jsonCases.map((c) => ({
          model_name: `identity_${c.datatype.toLowerCase()}`,
          binary_data: false,
          outputs: ['OUTPUT0'],
          inputs: [
            c.datatype === 'BYTES'
              ? {
                  name: 'INPUT0',
                  datatype: 'BYTES' as const,
                  shape: [c.values.length],
                  data_b64_list: c.values.map((v) => b64(bytesOf(String(v)))),
                }
              : {
                  name: 'INPUT0',
                  datatype: c.datatype,
                  shape: [c.values.length],
                  values: c.values as (number | boolean)[],
                },
          ],
        })),
      );
      for (const [index, c] of jsonCases.entries()) {
        const ref = reference[index] as HttpProbeResult;
        expect(ref.error).toBeUndefined();
        const data = c.datatype === 'INT64' ? c.values.map((v) => BigInt(v as number)) : c.values;
        const result = await json.infer(
          `identity_${c.datatype.toLowerCase()}`,
          [{ name: 'INPUT0', datatype: c.datatype, data: data as number[] }],
          {
            outputs: ['OUTPUT0'],
          },
        );
        const request = lastSent();
        expect(request.headers.get('inference-header-content-length')).toBeNull();
        const ours = JSON.parse(new TextDecoder().decode(request.body));
        const theirs = ref.request.json as { inputs: { data: unknown[] }[] };
        expect(ours.inputs[0].data).toEqual(theirs.inputs[0]?.data);
        expect(hex(result.output('OUTPUT0').raw)).toBe(b64hex(ref.response?.outputs[0]?.raw_b64));
      }
    } finally {
      await json.close();
    }
  });

  it('refuses FP16 without the binary extension, before sending', async () => {
    const json = createHttpClient({ url: `http://${triton.httpAddress}`, binaryData: false });
    try {
      const error = await caught(
        json.infer('identity_fp16', [{ name: 'INPUT0', datatype: 'FP16', data: [1] }]),
      );
      expect(error.code).toBe(ErrorCode.InvalidArgument);
    } finally {
      await json.close();
    }
  });
});

describe('management over HTTP returns what gRPC returns', () => {
  it('health, metadata and config', async () => {
    expect(await http.serverLive()).toBe(true);
    expect(await http.serverReady()).toBe(true);
    expect(await http.modelReady('add_sub')).toBe(true);
    expect(await http.modelReady('no_such_model')).toBe(false);
    const [viaHttp, viaGrpc] = [await http.serverMetadata(), await grpc.serverMetadata()];
    expect(viaHttp).toEqual(viaGrpc);
    expect(await http.modelMetadata('add_sub')).toEqual(await grpc.modelMetadata('add_sub'));
    const config = await http.modelConfig('add_sub');
    expect(config.name).toBe('add_sub');
    expect(config.max_batch_size).toBe((await grpc.modelConfig('add_sub')).maxBatchSize);
  });

  it('statistics count an inference made over HTTP', async () => {
    const before = (await http.modelStatistics('identity_int32'))[0];
    await http.infer('identity_int32', [{ name: 'INPUT0', datatype: 'INT32', data: [1, 2] }]);
    // Triton records statistics when it releases a request, which can come after the client has its
    // response: poll (bounded) until the inference is counted.
    const counted = async () => {
      const [now] = await http.modelStatistics('identity_int32');
      return [
        (now?.inferenceCount ?? 0) - (before?.inferenceCount ?? 0),
        (now?.inference.success.count ?? 0) - (before?.inference.success.count ?? 0),
      ];
    };
    await expect.poll(counted).toEqual([1, 1]);
    const after = (await http.modelStatistics('identity_int32'))[0];
    expect(after?.inferenceCount).toBe((before?.inferenceCount ?? 0) + 1);
    expect(after?.inference.success.count).toBe((before?.inference.success.count ?? 0) + 1);
    const viaGrpc = (await grpc.modelStatistics('identity_int32'))[0];
    expect(viaGrpc?.inferenceCount).toBe(after?.inferenceCount);
  });

  it('repository index lists what gRPC lists', async () => {
    const names = (list: { name: string }[]) => list.map((model) => model.name).sort();
    expect(names(await http.repositoryIndex())).toEqual(names(await grpc.repositoryIndex()));
  });

  it('trace and log settings need the access token, and read what gRPC reads', async () => {
    const denied = await caught(http.traceSettings());
    expect(denied.code).toBe(ErrorCode.PermissionDenied);
    expect(denied.httpStatus).toBe(403);
    const authorized = createHttpClient({
      url: `http://${triton.httpAddress}`,
      accessToken: triton.accessToken,
    });
    const grpcAuthorized = createTritonClient({
      url: triton.grpcAddress,
      accessToken: triton.accessToken,
      enableGpuIpc: false,
    });
    try {
      expect(await authorized.traceSettings()).toEqual(await grpcAuthorized.traceSettings());
      const log = await authorized.logSettings();
      expect(typeof log.log_info).toBe('boolean');
      expect(log).toEqual(await grpcAuthorized.logSettings());
    } finally {
      await authorized.close();
      await grpcAuthorized.close();
    }
  });

  it('system shared memory: a bad registration is a typed error', async () => {
    const error = await caught(
      http.registerSystemSharedMemory({ name: 'missing', key: '/infergate-no-such-key', byteSize: 64 }),
    );
    expect(error.code).toBe(ErrorCode.Internal);
    expect(error.httpStatus).toBe(500);
  });

  it('system shared memory: register, status, input and output bound to the region, unregister', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 128 });
    const name = `interop_http_${process.pid}`;
    try {
      await http.registerSystemSharedMemory({ name, key: region.key, byteSize: 128 });
      expect(await http.systemSharedMemoryStatus(name)).toEqual([
        { name, key: region.key, offset: 0, byteSize: 128 },
      ]);
      region.write(new Uint8Array(Float32Array.from([5, 6, 7, 8]).buffer), 0);
      const result = await http.infer(
        'identity_fp32',
        [{ name: 'INPUT0', datatype: 'FP32', shape: [4], sharedMemory: { region: name, byteSize: 16 } }],
        { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: name, byteSize: 16, offset: 64 } }] },
      );
      const output = result.output('OUTPUT0');
      expect(output.shape).toEqual([4]);
      expect(output.raw.byteLength).toBe(0);
      expect(Array.from(new Float32Array(Uint8Array.from(region.read(64, 16)).buffer))).toEqual([5, 6, 7, 8]);
      await http.unregisterSystemSharedMemory(name);
      expect((await http.systemSharedMemoryStatus()).some((entry) => entry.name === name)).toBe(false);
    } finally {
      await http.unregisterSystemSharedMemory(name).catch(() => {});
      region.destroy();
    }
  });
});

describe('errors over HTTP carry the codes gRPC gives', () => {
  const bad = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16) }];
  it('an unknown model', async () => {
    const [viaHttp, viaGrpc] = [
      await caught(http.infer('no_such_model', bad)),
      await caught(grpc.infer('no_such_model', bad)),
    ];
    expect(viaHttp.code).toBe(viaGrpc.code);
    expect(viaHttp.code).toBe(ErrorCode.NotFound);
    expect(viaHttp.httpStatus).toBe(404);
  });

  it('a wrong shape', async () => {
    const wrong = [
      { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 3], data: new Float32Array(3) },
      { name: 'INPUT1', datatype: 'FP32' as const, shape: [1, 3], data: new Float32Array(3) },
    ];
    const [viaHttp, viaGrpc] = [
      await caught(http.infer('add_sub', wrong)),
      await caught(grpc.infer('add_sub', wrong)),
    ];
    expect(viaHttp.code).toBe(ErrorCode.InvalidArgument);
    expect(viaHttp.code).toBe(viaGrpc.code);
  });

  it('a decoupled model through plain infer', async () => {
    const [viaHttp, viaGrpc] = [
      await caught(http.infer('repeat', [{ name: 'IN', datatype: 'INT32', data: [2] }])),
      await caught(grpc.infer('repeat', [{ name: 'IN', datatype: 'INT32', data: [2] }])),
    ];
    expect(viaHttp.code).toBe(viaGrpc.code);
    expect(viaHttp.code).toBe(ErrorCode.Unimplemented);
    expect(viaHttp.httpStatus).toBe(501);
  });
});

describe("Triton's generate extension", () => {
  it('generate answers once with the whole text', async () => {
    const answer = await http.generate('generate', {
      text_input: 'one two three',
      stream: false,
      exclude_input_in_output: true,
    });
    expect(answer.model_name).toBe('generate');
    expect(answer.text_output).toBe('one two three');
  });

  it('generate_stream sends one event per word', async () => {
    const pieces: string[] = [];
    for await (const event of http.generateStream('generate', {
      text_input: 'one two three four',
      stream: true,
      max_tokens: 3,
    })) {
      pieces.push(String(event.text_output));
    }
    expect(pieces).toEqual(['one', ' two', ' three']);
  });

  it('leaving generate_stream early cancels it and the client keeps working', async () => {
    for await (const event of http.generateStream('generate', { text_input: 'a b c d e f', stream: true })) {
      expect(event.text_output).toBe('a');
      break;
    }
    expect(await http.serverLive()).toBe(true);
  });
});
