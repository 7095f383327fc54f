// Datatypes and classification, byte for byte against tritonclient.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import { type DataType, encodeTensor } from '@infergate/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTritonClients, tritonIsUp } from './shared-triton.js';
import {
  b64hex,
  hex,
  type ProbeJob,
  type ProbeResult,
  probeTritonclient,
  probeValue,
} from './tritonclient-probe.js';

const { triton, client } = sharedTritonClients();

/** Runs jobs through the official tritonclient against the shared server. */
const probe = (jobs: ProbeJob[]): Promise<ProbeResult[]> => probeTritonclient(triton.grpcAddress, jobs);

// ── datatypes, checked against tritonclient ──────────────────────────────────────────────────

interface DtypeCase {
  datatype: Exclude<DataType, 'BYTES'>;
  values: (number | bigint | boolean)[];
  /** What core decodes the output to (toArray()); defaults to `values`. */
  decoded?: (number | bigint | boolean)[];
}

const DTYPE_CASES: DtypeCase[] = [
  { datatype: 'BOOL', values: [true, false, true, true] },
  { datatype: 'UINT8', values: [0, 1, 127, 255] },
  { datatype: 'UINT16', values: [0, 1, 0x8000, 0xffff] },
  { datatype: 'UINT32', values: [0, 1, 2 ** 31, 2 ** 32 - 1] },
  { datatype: 'UINT64', values: [0n, 1n, 2n ** 63n, 2n ** 64n - 1n] },
  { datatype: 'INT8', values: [-128, -1, 0, 127] },
  { datatype: 'INT16', values: [-32768, -1, 0, 32767] },
  { datatype: 'INT32', values: [-(2 ** 31), -1, 0, 2 ** 31 - 1] },
  { datatype: 'INT64', values: [-(2n ** 63n), -1n, 0n, 2n ** 63n - 1n] },
  {
    datatype: 'FP16',
    values: [
      0,
      -0,
      1.5,
      -2.25,
      65504,
      0.1,
      1e-7,
      70000,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      NaN,
    ],
    decoded: [
      0,
      -0,
      1.5,
      -2.25,
      65504,
      0.0999755859375,
      2 ** -23,
      Number.POSITIVE_INFINITY,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      NaN,
    ],
  },
  {
    datatype: 'BF16',
    values: [0, -0, 1.5, Math.E, -1e30, 3e38, Number.POSITIVE_INFINITY, NaN],
    decoded: [
      0,
      -0,
      1.5,
      2.71875,
      -1.0002555517425873e30,
      3.00405527047391e38,
      Number.POSITIVE_INFINITY,
      NaN,
    ],
  },
  {
    datatype: 'FP32',
    values: [0, -0, 1.5, 0.1, 3.4028234663852886e38, 1e-45, Number.NEGATIVE_INFINITY, NaN],
    decoded: [
      0,
      -0,
      1.5,
      Math.fround(0.1),
      3.4028234663852886e38,
      Math.fround(1e-45),
      Number.NEGATIVE_INFINITY,
      NaN,
    ],
  },
  {
    datatype: 'FP64',
    values: [0, -0, Math.PI, Number.MAX_VALUE, Number.MIN_VALUE, Number.NEGATIVE_INFINITY, NaN],
  },
];

/** BYTES elements: empty, ASCII, multi-byte UTF-8, NUL, arbitrary binary, trailing NULs, 100 kB. */
const BYTES_ELEMENTS: (string | Uint8Array)[] = [
  '',
  'hello',
  'héllo ✓ 日本語 🚀',
  '\u0000',
  new Uint8Array([0, 255, 0, 10, 13, 0x80, 0xfe]),
  new Uint8Array([65, 0, 0]),
  'x'.repeat(100_000),
];

describe('datatypes (identity_<dtype>) against tritonclient', () => {
  let reference: ProbeResult[];

  beforeAll(async () => {
    if (!tritonIsUp()) return; // each test then fails with the start error (shared-triton.ts)
    reference = await probe([
      ...DTYPE_CASES.map((c) => ({
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
            shape: [BYTES_ELEMENTS.length],
            data_b64_list: BYTES_ELEMENTS.map((e) => Buffer.from(e as string).toString('base64')),
          },
        ],
      },
    ]);
  });

  for (const [index, c] of DTYPE_CASES.entries()) {
    it(`${c.datatype}: encoding, Triton's output and decoding equal tritonclient's byte for byte`, async () => {
      const ref = reference[index] as ProbeResult;
      expect(ref.error).toBeUndefined();
      const input = { name: 'INPUT0', datatype: c.datatype, data: c.values as number[] };
      const encoded = encodeTensor(input);
      expect(encoded.shape).toEqual(ref.request.inputs[0]?.shape);
      expect(hex(encoded.raw)).toBe(b64hex(ref.request.raw_input_contents_b64[0]));

      const result = await client.infer(`identity_${c.datatype.toLowerCase()}`, [input]);
      const output = result.output('OUTPUT0');
      expect(output.datatype).toBe(c.datatype);
      expect(output.shape).toEqual([c.values.length]);
      expect(hex(output.raw)).toBe(b64hex(ref.response?.outputs[0]?.raw_b64));
      expect(hex(output.raw)).toBe(hex(encoded.raw));
      expect(output.toArray()).toEqual(c.decoded ?? c.values);
    });
  }

  it('BYTES: empty, unicode, NUL, binary and 100 kB elements equal tritonclient byte for byte', async () => {
    const ref = reference[DTYPE_CASES.length] as ProbeResult;
    expect(ref.error).toBeUndefined();
    const input = { name: 'INPUT0', datatype: 'BYTES' as const, data: BYTES_ELEMENTS };
    const encoded = encodeTensor(input);
    expect(hex(encoded.raw)).toBe(b64hex(ref.request.raw_input_contents_b64[0]));

    const output = (await client.infer('identity_bytes', [input])).output('OUTPUT0');
    expect(output.datatype).toBe('BYTES');
    expect(output.shape).toEqual([BYTES_ELEMENTS.length]);
    expect(hex(output.raw)).toBe(b64hex(ref.response?.outputs[0]?.raw_b64));
    const elements = output.data as Buffer[];
    expect(elements.map((e) => e.toString('hex'))).toEqual(
      BYTES_ELEMENTS.map((e) => Buffer.from(e as string).toString('hex')),
    );
    expect(output.strings()[2]).toBe('héllo ✓ 日本語 🚀');
  });

  it('FP16 from JS numbers (doubles) rounds like numpy does from Python floats', async () => {
    // 1 + 2^-11 + 2^-30 lies just above the midpoint of two halves: numpy rounds the double up
    // (0x3c01); rounding through float32 first lands exactly on the midpoint and ties to even (0x3c00).
    const values = [1 + 2 ** -11 + 2 ** -30, -(1 + 2 ** -11 + 2 ** -30)];
    const [ref] = await probe([
      {
        model_name: 'identity_fp16',
        dry_run: true,
        inputs: [{ name: 'INPUT0', datatype: 'FP16', shape: [2], values }],
      },
    ]);
    expect(b64hex(ref?.request.raw_input_contents_b64[0])).toBe('013c01bc');
    expect(hex(encodeTensor({ name: 'INPUT0', datatype: 'FP16', data: values }).raw)).toBe('013c01bc');
  });

  it('classification (classCount) gives the same "value:index" BYTES as tritonclient class_count', async () => {
    const values = [0.5, 3, 1, 2];
    const [ref] = await probe([
      {
        model_name: 'identity_fp32',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], values }],
        outputs: [{ name: 'OUTPUT0', class_count: 2 }],
      },
    ]);
    const result = await client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: values }], {
      outputs: [{ name: 'OUTPUT0', classCount: 2 }],
    });
    const output = result.output('OUTPUT0');
    expect(output.datatype).toBe('BYTES');
    expect(output.shape).toEqual([2]);
    expect(output.strings()).toEqual(['3.000000:1', '2.000000:3']);
    expect(hex(output.raw)).toBe(b64hex(ref?.response?.outputs[0]?.raw_b64));
  });

  it('a 256 MiB FP32 tensor round-trips through identity_fp32 over plain gRPC', async () => {
    const count = (256 * 1024 * 1024) / 4;
    const data = new Float32Array(count);
    for (let i = 0; i < count; i += 1) data[i] = i % 1_000_003;
    const result = await client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }]);
    const output = result.output('OUTPUT0');
    expect(output.shape).toEqual([count]);
    expect(output.raw.byteLength).toBe(data.byteLength);
    expect(Buffer.compare(Buffer.from(output.raw), Buffer.from(data.buffer))).toBe(0);
    expect(client.grpc.sharedMemory?.regionCount ?? 0).toBe(0);
  }, 120_000);
});
