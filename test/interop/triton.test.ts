// @infergate/core against a real Triton 2.51 (PyTriton 0.7.0, CPU), checked against tritonclient.
// One server for the whole file (start ~11 s, stop ~17 s). See README.md in this folder.
import {
  createTritonClient,
  type DataType,
  encodeTensor,
  InfergateError,
  type InferResult,
  SystemSharedMemoryRegion,
  type TritonClient,
} from '@infergate/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPython, startTriton, type TritonHandle } from './triton-harness.js';

let triton: TritonHandle;
/** Plain gRPC (no automatic shared memory), no access token. */
let client: TritonClient;
/** The same with the access token for the restricted `trace` and `logging` groups. */
let admin: TritonClient;

beforeAll(async () => {
  // Rejects with the server's log tail if Triton does not come up: every test then fails, none is skipped.
  triton = await startTriton();
  client = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false });
  admin = createTritonClient({
    url: triton.grpcAddress,
    enableGpuIpc: false,
    accessToken: triton.accessToken,
  });
});

afterAll(async () => {
  await client?.close();
  await admin?.close();
  await triton?.stop();
});

afterEach((context) => {
  if (context.task.result?.state === 'fail' && triton) {
    console.error(`--- Triton log tail after '${context.task.name}' ---\n${triton.logTail(40)}`);
  }
});

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────

interface ProbeResult {
  request: {
    raw_input_contents_b64: string[];
    inputs: { name: string; datatype: string; shape: number[]; parameters: Record<string, unknown> }[];
  };
  response?: {
    id: string;
    outputs: { name: string; datatype: string; shape: number[]; raw_b64: string | null }[];
  };
  error?: { message: string; status: string };
}

type ProbeInput =
  | { name: string; datatype: string; shape: number[]; values: (number | string | boolean)[] }
  | { name: string; datatype: 'BYTES'; shape: number[]; data_b64_list: string[] };

interface ProbeJob {
  model_name: string;
  inputs: ProbeInput[];
  outputs?: (string | { name: string; class_count: number })[];
  dry_run?: boolean;
}

/** Runs jobs through the official tritonclient (one Python process for all of them). */
async function probe(jobs: ProbeJob[]): Promise<ProbeResult[]> {
  const out = await runPython(
    'tritonclient_probe.py',
    [],
    JSON.stringify(jobs.map((job) => ({ url: triton.grpcAddress, ...job }))),
  );
  return JSON.parse(out) as ProbeResult[];
}

const hex = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
const b64hex = (b64: string | null | undefined) => Buffer.from(b64 ?? '', 'base64').toString('hex');

/** What the Python side should parse: JSON cannot carry NaN, ±Infinity, -0 or 64-bit integers. */
function probeValue(value: number | bigint | boolean): number | string | boolean {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0.0';
    if (!Number.isFinite(value)) return String(value);
  }
  return value;
}

async function caught(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    return error as InfergateError;
  }
  throw new Error('expected the call to fail');
}

async function collect(iterable: AsyncIterable<InferResult>, name = 'OUT'): Promise<unknown[]> {
  const values: unknown[] = [];
  for await (const result of iterable) values.push(...result.output(name).toArray());
  return values;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForLog(pattern: RegExp, ms: number): Promise<string | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const line = triton
      .logTail(2000)
      .split('\n')
      .find((l) => pattern.test(l));
    if (line !== undefined) return line;
    await sleep(100);
  }
  return undefined;
}

const slowInput = (value = 1) => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 1], data: [value] },
];
const repeatInputs = (count: number, delayMs?: number) => [
  { name: 'IN', datatype: 'INT32' as const, data: [count] },
  ...(delayMs !== undefined ? [{ name: 'DELAY_MS', datatype: 'INT32' as const, data: [delayMs] }] : []),
];

// ── 1. datatypes, checked against tritonclient ──────────────────────────────────────────────────

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

// ── 2. decoupled streaming, stream sessions, cancellation ──────────────────────────────────────

describe('decoupled streaming (repeat)', () => {
  it('inferStream yields 0, 1 and N responses and ends on the final flag', async () => {
    expect(await collect(client.inferStream('repeat', repeatInputs(0)))).toEqual([]);
    expect(await collect(client.inferStream('repeat', repeatInputs(1)))).toEqual([0]);
    const results: InferResult[] = [];
    for await (const r of client.inferStream('repeat', repeatInputs(5), { requestId: 'five' }))
      results.push(r);
    expect(results.map((r) => r.output('OUT').toArray()[0])).toEqual([0, 1, 2, 3, 4]);
    for (const r of results) {
      expect(r.id).toBe('five');
      expect(r.model).toBe('repeat');
      expect(r.parameters.triton_final_response).toBe(false);
    }
  });

  it("a model error ends the stream with the model's message", async () => {
    const error = await caught(collect(client.inferStream('repeat', repeatInputs(-1))));
    expect(error.rawMessage).toContain('repeat: IN must be >= 0, got -1');
  });

  it('unary infer() on a decoupled model is UNIMPLEMENTED', async () => {
    const error = await caught(client.infer('repeat', repeatInputs(1)));
    expect(error.code).toBe('UNIMPLEMENTED');
    expect(error.rawMessage).toContain(
      "ModelInfer RPC doesn't support models with decoupled transaction policy",
    );
  });

  it('openStream: concurrent requests are matched by id and one failure ends only its own request', async () => {
    const session = client.openStream();
    const settle = async (iterable: AsyncIterable<InferResult>) => {
      const got: unknown[] = [];
      try {
        for await (const r of iterable) got.push(`${r.id}:${r.output('OUT').toArray()[0]}`);
        return got;
      } catch (error) {
        return [...got, (error as InfergateError).rawMessage.includes('IN must be >= 0') ? 'failed' : error];
      }
    };
    const results = await Promise.all([
      settle(session.infer('repeat', repeatInputs(3, 40))),
      settle(session.infer('repeat', repeatInputs(-1))),
      settle(session.infer('repeat', repeatInputs(2, 30), { requestId: 'mine' })),
      settle(session.infer('repeat', repeatInputs(0))),
      settle(session.infer('repeat', repeatInputs(4))),
    ]);
    expect(results).toEqual([
      ['infergate-1:0', 'infergate-1:1', 'infergate-1:2'],
      ['failed'],
      ['mine:0', 'mine:1'],
      [],
      ['infergate-4:0', 'infergate-4:1', 'infergate-4:2', 'infergate-4:3'],
    ]);
    expect(session.pending).toBe(0);
    await session.close();
  });

  it('leaving the loop early cancels the RPC: the client returns at once and Triton logs the cancellation', async () => {
    await admin.updateLogSettings({ log_verbose_level: 1 });
    try {
      const started = Date.now();
      const seen: unknown[] = [];
      // 20 responses, 100 ms apart: 2 s if it ran to the end.
      for await (const r of client.inferStream('repeat', repeatInputs(20, 100), {
        requestId: 'leave-early',
      })) {
        seen.push(r.output('OUT').toArray()[0]);
        if (seen.length === 2) break;
      }
      const elapsed = Date.now() - started;
      expect(seen).toEqual([0, 1]);
      expect(elapsed).toBeLessThan(1000);
      const line = await waitForLog(/Cancellation notification received for ModelStreamInferHandler/, 3000);
      expect(line).toBeDefined();
      // PyTriton's callable keeps yielding; Triton drops what it sends for the cancelled call.
      expect(
        await waitForLog(/skipping response generation as grpc transaction was cancelled/, 3000),
      ).toBeDefined();
    } finally {
      await admin.updateLogSettings({ log_verbose_level: 0 });
    }
  });

  it('aborting the signal rejects promptly with CANCELLED', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 250);
    const started = Date.now();
    const seen: unknown[] = [];
    const error = await caught(
      (async () => {
        for await (const r of client.inferStream('repeat', repeatInputs(20, 100), {
          signal: controller.signal,
        }))
          seen.push(r.output('OUT').toArray()[0]);
      })(),
    );
    expect(error.code).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(1000);
    // Maybe none: PyTriton's callable of the stream cancelled just before keeps the one instance busy.
    expect(seen.length).toBeLessThan(20);
  });

  it('StreamSession.cancel() fails the unfinished requests with CANCELLED', async () => {
    const session = client.openStream();
    const iterable = session.infer('repeat', repeatInputs(20, 100));
    const started = Date.now();
    setTimeout(() => session.cancel(), 250);
    const error = await caught(collect(iterable));
    expect(error.code).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

// ── 3. scheduling: priority, queue full, server-side timeout ──────────────────────────────────

describe('scheduling on slow_queue (200 ms, one at a time, queue of 2 per priority level)', () => {
  it('a priority-1 request overtakes a queued default-priority (2) one', async () => {
    const order: string[] = [];
    const run = (tag: string, priority?: number) =>
      client
        .infer('slow_queue', slowInput(), priority !== undefined ? { priority } : {})
        .then(() => order.push(tag));
    const busy = [run('busy-1')];
    await sleep(30);
    busy.push(run('busy-2')); // the dynamic batcher stages one request for the busy instance
    await sleep(30);
    const low = run('low');
    await sleep(30);
    const high = run('high', 1);
    await Promise.all([...busy, low, high]);
    expect(order.indexOf('high')).toBeLessThan(order.indexOf('low'));
  });

  it('a burst of 8 overflows the queue: QUEUE_FULL with backpressure, the rest succeed', async () => {
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, () => client.infer('slow_queue', slowInput())),
    );
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as InfergateError] : []));
    const successes = settled.length - failures.length;
    expect(successes).toBeGreaterThanOrEqual(2);
    expect(failures.length).toBeGreaterThanOrEqual(3);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(InfergateError);
      expect(failure.code).toBe('QUEUE_FULL');
      expect(failure.backpressure).toBe(true);
      expect(failure.retryable).toBe(true);
      expect(failure.model).toBe('slow_queue');
      expect(failure.rawMessage).toContain('Exceeds maximum queue size');
    }
  });

  it('timeoutUs: a request that waits longer than its server-side timeout fails with DEADLINE_EXCEEDED', async () => {
    const busy = [client.infer('slow_queue', slowInput())];
    await sleep(30);
    busy.push(client.infer('slow_queue', slowInput()));
    await sleep(30);
    const started = Date.now();
    const error = await caught(client.infer('slow_queue', slowInput(), { timeoutUs: 1000 }));
    await Promise.all(busy);
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    expect(error.rawMessage).toContain('Request timeout expired');
    // The queue policy's default is 10 s: the 1 ms override is what ended it.
    expect(Date.now() - started).toBeLessThan(2000);
    // Without the override the same request is served.
    await expect(client.infer('slow_queue', slowInput(), { timeoutUs: 5_000_000 })).resolves.toBeDefined();
  });
});

// ── 4. health, metadata, config, statistics ──────────────────────────────────────────────────

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
    await sleep(250); // let slow_queue finish the abandoned request
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
    const [after] = await client.modelStatistics('add_sub');
    expect(before).toBeDefined();
    expect(after).toBeDefined();
    if (before === undefined || after === undefined) return;
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

// ── 5. repository ────────────────────────────────────────────────────────────────────────────

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

// ── 6. shared memory ─────────────────────────────────────────────────────────────────────────

describe('system shared memory', () => {
  it('register, status, input bound to a region, unregister', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 256 });
    const name = `interop_in_${process.pid}`;
    try {
      await client.registerSystemSharedMemory({ name, key: region.key, byteSize: 256 });
      expect(await client.systemSharedMemoryStatus(name)).toEqual([
        { name, key: region.key, offset: 0, byteSize: 256 },
      ]);
      region.write(new Uint8Array(Float32Array.from([1, 2, 3, 4]).buffer), 64);
      const result = await client.infer('identity_fp32', [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [4],
          sharedMemory: { region: name, byteSize: 16, offset: 64 },
        },
      ]);
      expect(result.output('OUTPUT0').toArray()).toEqual([1, 2, 3, 4]);
      await client.unregisterSystemSharedMemory(name);
      expect((await client.systemSharedMemoryStatus()).some((r) => r.name === name)).toBe(false);
    } finally {
      await client.unregisterSystemSharedMemory(name).catch(() => {});
      region.destroy();
    }
  });

  it('an output bound to a region is written there (input and output in one region)', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 128 });
    const name = `interop_io_${process.pid}`;
    try {
      await client.registerSystemSharedMemory({ name, key: region.key, byteSize: 128 });
      region.write(new Uint8Array(Float32Array.from([5, 6, 7, 8]).buffer), 0);
      const result = await client.infer(
        'identity_fp32',
        [{ name: 'INPUT0', datatype: 'FP32', shape: [4], sharedMemory: { region: name, byteSize: 16 } }],
        { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: name, byteSize: 16, offset: 64 } }] },
      );
      const output = result.output('OUTPUT0');
      expect(output.shape).toEqual([4]);
      expect(output.raw.byteLength).toBe(0);
      expect(Array.from(new Float32Array(Uint8Array.from(region.read(64, 16)).buffer))).toEqual([5, 6, 7, 8]);
    } finally {
      await client.unregisterSystemSharedMemory(name).catch(() => {});
      region.destroy();
    }
  });

  it('CUDA shared memory on a CPU-only server: status is empty, registration is refused', async () => {
    expect(await client.cudaSharedMemoryStatus()).toEqual([]);
    const error = await caught(
      client.registerCudaSharedMemory({
        name: 'cuda0',
        rawHandle: new Uint8Array(64),
        deviceId: 0,
        byteSize: 64,
      }),
    );
    expect(error.rawMessage.length).toBeGreaterThan(0);
    await expect(client.unregisterCudaSharedMemory()).resolves.toBeUndefined();
  });

  it('enableGpuIpc: a large input travels through an automatically registered region', async () => {
    const ipc = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: true });
    try {
      const data = Float32Array.from({ length: 1024 * 1024 }, (_, i) => i); // 4 MiB > 1 MiB threshold
      const output = (await ipc.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }])).output(
        'OUTPUT0',
      );
      expect(Buffer.compare(Buffer.from(output.raw), Buffer.from(data.buffer))).toBe(0);
      expect(ipc.grpc.sharedMemory?.regionCount ?? 0).toBeGreaterThan(0);
      const regions = await ipc.systemSharedMemoryStatus();
      expect(regions.some((r) => r.name.startsWith(`infergate_${process.pid}_`))).toBe(true);
      // Small inputs stay in the message.
      const small = await ipc.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }]);
      expect(small.output('OUTPUT0').toArray()).toEqual([1, 2]);
    } finally {
      await ipc.close();
    }
    // close() unregisters the pooled regions.
    const left = await client.systemSharedMemoryStatus();
    expect(left.some((r) => r.name.startsWith(`infergate_${process.pid}_`))).toBe(false);
  });
});

// ── 7. access token, compression ─────────────────────────────────────────────────────────────

describe('access token and compression', () => {
  it('restricted logging/trace fail without the token and work with it', async () => {
    const denied = await caught(client.logSettings());
    expect(denied.rawMessage).toContain(
      "This protocol is restricted, expecting header 'triton-grpc-protocol-triton-access-token'",
    );
    expect((await caught(client.traceSettings())).rawMessage).toContain('This protocol is restricted');

    const wrong = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false, accessToken: 'wrong' });
    try {
      expect((await caught(wrong.logSettings())).rawMessage).toContain('This protocol is restricted');
    } finally {
      await wrong.close();
    }
    expect(await admin.logSettings()).toMatchObject({ log_info: true, log_verbose_level: 0 });
    // The header can also be given per call.
    const viaHeader = await client.logSettings({
      headers: { 'triton-grpc-protocol-triton-access-token': triton.accessToken },
    });
    expect(viaHeader.log_error).toBe(true);
    // Unrestricted groups need no token.
    expect(await client.serverReady()).toBe(true);
  });

  it("a rejected token is reported as a permission problem, not as a retryable 'unavailable'", async () => {
    const denied = await caught(client.logSettings());
    // Triton answers UNAVAILABLE; a router would retry or fail over on it as if the server were down.
    expect(['PERMISSION_DENIED', 'UNAUTHENTICATED']).toContain(denied.code);
    expect(denied.retryable).toBe(false);
  });

  it("compression: 'gzip' requests are accepted and answered", async () => {
    const gzip = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false, compression: 'gzip' });
    try {
      const data = new Float32Array(256 * 1024).fill(1.25); // 1 MiB, compresses well
      const output = (await gzip.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }])).output(
        'OUTPUT0',
      );
      expect(Buffer.compare(Buffer.from(output.raw), Buffer.from(data.buffer))).toBe(0);
      expect(await gzip.serverLive()).toBe(true);
      expect(await collect(gzip.inferStream('repeat', repeatInputs(3)))).toEqual([0, 1, 2]);
    } finally {
      await gzip.close();
    }
  });
});

// ── 8. sequences ─────────────────────────────────────────────────────────────────────────────

describe('sequences (accumulate)', () => {
  const value = (v: number) => [{ name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 1], data: [v] }];
  const sum = (r: InferResult) => r.output('OUTPUT0').toArray()[0];

  it('client.sequence() keeps a running sum per sequence, START and END set for us', async () => {
    const a = await client.sequence('accumulate');
    const b = await client.sequence('accumulate');
    expect(sum(await a.infer(value(2)))).toBe(2);
    expect(sum(await b.infer(value(100)))).toBe(100);
    expect(sum(await a.infer(value(3)))).toBe(5);
    expect(sum(await b.end(value(1)))).toBe(101);
    expect(sum(await a.end(value(4)))).toBe(9);
    expect(a.ended).toBe(true);
    expect((await caught(a.infer(value(1)))).code).toBe('FAILED_PRECONDITION');
    // A given numeric id works too.
    const c = await client.sequence('accumulate', { id: 4242 });
    expect(sum(await c.infer(value(7)))).toBe(7);
    expect(sum(await c.end(value(1)))).toBe(8);
  });

  it('a request for a new sequence without START is rejected', async () => {
    const error = await caught(client.infer('accumulate', value(1), { sequenceId: 987_654 }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.rawMessage).toContain('must specify the START flag on the first request of the sequence');
    const missing = await caught(client.infer('sequence_echo', value(1)));
    expect(missing.code).toBe('INVALID_ARGUMENT');
    expect(missing.rawMessage).toContain('must specify a non-zero or non-empty correlation ID');
  });
});

// ── 9. trace and log settings ────────────────────────────────────────────────────────────────

describe('trace and log settings (restricted: need the token)', () => {
  it('trace settings: get, update globally and per model, reset with null', async () => {
    const initial = await admin.traceSettings();
    expect(initial).toMatchObject({ trace_mode: ['triton'], trace_level: ['OFF'], trace_rate: ['1000'] });
    try {
      const updated = await admin.updateTraceSettings({ trace_rate: 5, trace_count: 10, log_frequency: 2 });
      expect(updated).toMatchObject({ trace_rate: ['5'], trace_count: ['10'], log_frequency: ['2'] });
      const model = await admin.updateTraceSettings({ trace_rate: 7 }, { model: 'identity_fp32' });
      expect(model.trace_rate).toEqual(['7']);
      expect((await admin.traceSettings()).trace_rate).toEqual(['5']);
      expect((await admin.traceSettings({ model: 'identity_fp32' })).trace_rate).toEqual(['7']);
      // null clears the model's own value: it falls back to the global one.
      expect(
        (await admin.updateTraceSettings({ trace_rate: null }, { model: 'identity_fp32' })).trace_rate,
      ).toEqual(['5']);
    } finally {
      const reset = await admin.updateTraceSettings({
        trace_rate: null,
        trace_count: null,
        log_frequency: null,
      });
      expect(reset).toMatchObject({ trace_rate: ['1000'], trace_count: ['-1'], log_frequency: ['0'] });
    }
  });

  it("trace settings Triton refuses keep Triton's reason in the error", async () => {
    // Triton answers UNIMPLEMENTED "trace file location can not be updated through network protocol".
    const error = await caught(admin.updateTraceSettings({ trace_file: '/tmp/infergate-trace.json' }));
    expect(error.code).toBe('UNIMPLEMENTED');
    expect(error.message).toContain('trace file location can not be updated');
  });

  it('log settings: get and update', async () => {
    const initial = await admin.logSettings();
    expect(initial).toEqual({
      log_info: true,
      log_warning: true,
      log_error: true,
      log_verbose_level: 0,
      log_format: 'default',
      log_file: '',
    });
    try {
      const updated = await admin.updateLogSettings({ log_info: false, log_verbose_level: 2 });
      expect(updated).toMatchObject({ log_info: false, log_verbose_level: 2 });
      expect(await admin.logSettings()).toMatchObject({ log_info: false, log_verbose_level: 2 });
    } finally {
      expect(await admin.updateLogSettings({ log_info: true, log_verbose_level: 0 })).toMatchObject({
        log_info: true,
        log_verbose_level: 0,
      });
    }
  });
});
