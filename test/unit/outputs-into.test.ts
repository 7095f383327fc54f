// Outputs decoded into memory the caller gives (`RequestedOutput.into`, decision 0026), on every
// path: the http2 engine (with its receive pool), grpc-js, HTTP, the shared-memory input path and
// the batcher; and every refusal, typed.

import { createMicroBatcher } from '@infergate/batcher';
import {
  type CallOptions,
  createTritonClient,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferResult,
  type InferTransport,
  type RequestedOutput,
  type TritonClient,
  writeOutputsInto,
} from '@infergate/core';
import { createHttpClient, type HttpClient } from '@infergate/core/http';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessagePoolStats } from '../../packages/core/src/h2/message-pool.js';

let server: TestServer;
let client: TritonClient;
/** A promise and the function that settles it (Node 20 has no Promise.withResolvers). */
function openable(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((ok) => {
    resolve = ok;
  });
  return { promise, resolve };
}
let gates = [openable()];
let gateEntered = 0;

/** Polls `condition` every 5 ms, for at most 10 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; tries < 2000 && !condition(); tries++) await new Promise((ok) => setTimeout(ok, 5));
  expect(condition()).toBe(true);
}

const ELEMENTS = 65_536; // 256 KiB of FP32: well over the pool's smallest message
const input = new Float32Array(ELEMENTS).map((_, index) => index * 0.5);
const identityInput = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, ELEMENTS], data: input }];

beforeAll(async () => {
  server = await startTestServer({
    http: true,
    models: [
      {
        // Answers only when the test opens its gate: a call can be abandoned while its batch runs.
        name: 'gated',
        maxBatchSize: 8,
        inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1] }],
        outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
        async execute(request) {
          const entry = gateEntered++;
          await (gates[entry] ?? openable()).promise;
          const given = request.input('INPUT0');
          return [{ name: 'OUTPUT0', datatype: 'FP32', shape: given.shape, raw: given.raw }];
        },
      },
      {
        name: 'two_outputs',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1] }],
        outputs: [
          { name: 'OUTPUT0', datatype: 'FP32', dims: [-1] },
          { name: 'OUTPUT1', datatype: 'FP32', dims: [-1] },
        ],
        execute(request) {
          const given = request.input('INPUT0');
          return [
            { name: 'OUTPUT0', datatype: 'FP32', shape: given.shape, raw: given.raw },
            { name: 'OUTPUT1', datatype: 'FP32', shape: given.shape, raw: given.raw },
          ];
        },
      },
    ],
  });
  client = createTritonClient({ url: server.url, enableGpuIpc: false, timeoutMs: 10_000 });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

function poolOf(target: TritonClient): { stats: MessagePoolStats } {
  return (target.grpc as unknown as { h2: { messagePool: { stats: MessagePoolStats } } }).h2.messagePool;
}

async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    return error as InfergateError;
  }
  throw new Error('the call succeeded');
}

function expectInto(result: InferResult, into: Float32Array): void {
  const output = result.output('OUTPUT0');
  expect(output.data).toBe(into);
  expect(output.shape).toEqual([1, ELEMENTS]);
  expect(Buffer.from(into.buffer, into.byteOffset, into.byteLength).equals(Buffer.from(input.buffer))).toBe(
    true,
  );
}

describe('outputs into caller memory on the http2 engine', () => {
  it('writes the output into the caller Float32Array and returns that very array', async () => {
    const into = new Float32Array(ELEMENTS);
    const result = await client.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into }] });
    expectInto(result, into);
  });

  it('receives answers whose outputs are all bound into recycled memory', async () => {
    const fresh = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const intos = [new Float32Array(ELEMENTS), new Float32Array(ELEMENTS)];
      for (let call = 0; call < 10; call++) {
        const into = intos[call % 2] as Float32Array;
        into.fill(0);
        expectInto(
          await fresh.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into }] }),
          into,
        );
      }
      // One message's memory, made once, taken back after each call and handed to the next.
      expect(poolOf(fresh).stats).toMatchObject({ fresh: 1, reused: 9, idle: 1 });
    } finally {
      await fresh.close();
    }
    // Closing frees the idle memory.
    expect(poolOf(fresh).stats).toMatchObject({ idle: 0, idleBytes: 0 });
  });

  it('keeps fresh memory for an answer with an output not bound to `into`', async () => {
    const fresh = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const into = new Float32Array(ELEMENTS);
      const result = await fresh.infer('two_outputs', [{ name: 'INPUT0', datatype: 'FP32', data: input }], {
        outputs: [{ name: 'OUTPUT0', into }, 'OUTPUT1'],
      });
      expect(result.output('OUTPUT0').data).toBe(into);
      const other = result.output('OUTPUT1').data as Float32Array;
      expect(other.buffer).not.toBe(into.buffer);
      expect(other[ELEMENTS - 1]).toBe(input[ELEMENTS - 1]);
      // No output at all named: every output comes back in the message, as before.
      await fresh.infer('identity', identityInput);
      expect(poolOf(fresh).stats).toMatchObject({ fresh: 0, reused: 0, idle: 0 });
      // Both outputs bound: the answer is pooled, and each output is in its own memory.
      const second = new Float32Array(ELEMENTS);
      const both = await fresh.infer('two_outputs', [{ name: 'INPUT0', datatype: 'FP32', data: input }], {
        outputs: [
          { name: 'OUTPUT0', into },
          { name: 'OUTPUT1', into: second },
        ],
      });
      expect(both.output('OUTPUT1').data).toBe(second);
      expect(second[7]).toBe(input[7]);
      expect(poolOf(fresh).stats).toMatchObject({ fresh: 1, idle: 1 });
    } finally {
      await fresh.close();
    }
  });

  it('views a smaller answer in the front of `into`, and accepts a Buffer or DataView', async () => {
    const into = new Float32Array(ELEMENTS + 16).fill(-1);
    const result = await client.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into }] });
    const data = result.output('OUTPUT0').data as Float32Array;
    expect(data).not.toBe(into);
    expect(data).toBeInstanceOf(Float32Array);
    expect(data.buffer).toBe(into.buffer);
    expect(data.length).toBe(ELEMENTS);
    expect(into[ELEMENTS]).toBe(-1);
    const bytes = Buffer.alloc(ELEMENTS * 4);
    const fromBuffer = await client.infer('identity', identityInput, {
      outputs: [{ name: 'OUTPUT0', into: bytes }],
    });
    expect(fromBuffer.output('OUTPUT0').data).toBeInstanceOf(Float32Array);
    expect(bytes.equals(Buffer.from(input.buffer))).toBe(true);
    const view = new DataView(new ArrayBuffer(ELEMENTS * 4));
    await client.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into: view }] });
    expect(view.getFloat32(4 * 9, true)).toBe(input[9]);
  });

  it('gives FP16 outputs as their bit patterns in a Uint16Array', async () => {
    const bits = new Uint16Array([0x3c00, 0x4000, 0xc000]);
    const into = new Uint16Array(3);
    const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP16', data: bits }], {
      outputs: [{ name: 'OUTPUT0', into }],
    });
    expect(result.output('OUTPUT0').data).toBe(into);
    expect(Array.from(into)).toEqual([0x3c00, 0x4000, 0xc000]);
    // toArray() gives the values, as without `into`: not the bit patterns.
    expect(result.output('OUTPUT0').toArray()).toEqual([1, 2, -2]);
    const bf16 = await client.infer(
      'identity',
      [{ name: 'INPUT0', datatype: 'BF16', data: new Uint16Array([0x3f80, 0xc040]) }],
      { outputs: [{ name: 'OUTPUT0', into: new Uint16Array(2) }] },
    );
    expect(bf16.output('OUTPUT0').toArray()).toEqual([1, -3]);
  });
});

describe('outputs into caller memory on the other paths', () => {
  it('grpc-js engine', async () => {
    const grpcJs = createTritonClient({ url: server.url, enableGpuIpc: false, engine: 'grpc-js' });
    try {
      const into = new Float32Array(ELEMENTS);
      expectInto(
        await grpcJs.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into }] }),
        into,
      );
    } finally {
      await grpcJs.close();
    }
  });

  it('HTTP transport', async () => {
    const http: HttpClient = createHttpClient({ url: server.httpUrl as string });
    try {
      const into = new Float32Array(ELEMENTS);
      expectInto(await http.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into }] }), into);
      const small = new Float32Array(4);
      const error = await failure(
        http.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into: small }] }),
      );
      expect(error.code).toBe(ErrorCode.OutOfRange);
    } finally {
      await http.close();
    }
  });

  it('GPU IPC on: the input staged through shared memory, the output into the caller array', async () => {
    const staged = createTritonClient({ url: server.url, sharedMemory: { thresholdBytes: 1024 } });
    try {
      const into = new Float32Array(ELEMENTS);
      expectInto(
        await staged.infer('identity', identityInput, { outputs: [{ name: 'OUTPUT0', into }] }),
        into,
      );
      expect(staged.grpc.sharedMemory?.stats).toMatchObject({ sharedMemoryCalls: 1, plainCalls: 0 });
      expect(poolOf(staged).stats.fresh).toBe(1);
    } finally {
      await staged.close();
    }
  });

  it('batcher: each caller gets its own rows in its own memory', async () => {
    const batcher = createMicroBatcher(client.grpc, { client, maxQueueDelayMs: 50, maxInFlightBatches: 1 });
    const batched = createTritonClient({ url: server.url, enableGpuIpc: false, transport: batcher });
    try {
      const width = 1024;
      const callers = Array.from({ length: 6 }, (_, caller) => ({
        data: new Float32Array(width).fill(caller + 0.25),
        into: new Float32Array(width),
      }));
      const results = await Promise.all(
        callers.map(({ data, into }) =>
          batched.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, width], data }], {
            outputs: [{ name: 'OUTPUT0', into }],
          }),
        ),
      );
      results.forEach((result, caller) => {
        const { into } = callers[caller] as (typeof callers)[number];
        expect(result.output('OUTPUT0').data).toBe(into);
        expect(into.every((value) => value === caller + 0.25)).toBe(true);
      });
      expect(batcher.stats().batches).toBeLessThan(callers.length);
      // One caller whose memory is too small fails alone; the others in its batch are answered.
      const small = new Float32Array(8);
      const mixed = await Promise.allSettled(
        callers.map(({ data, into }, caller) =>
          batched.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, width], data }], {
            outputs: [{ name: 'OUTPUT0', into: caller === 2 ? small : into }],
          }),
        ),
      );
      expect(mixed.map((settled) => settled.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect(((mixed[2] as PromiseRejectedResult).reason as InfergateError).code).toBe(ErrorCode.OutOfRange);
    } finally {
      await batched.close();
      await batcher.close();
    }
  });

  it('batcher: a caller that left while its batch ran gets nothing written into its memory', async () => {
    const batcher = createMicroBatcher(client.grpc, { client, maxQueueDelayMs: 20, maxInFlightBatches: 1 });
    const batched = createTritonClient({ url: server.url, enableGpuIpc: false, transport: batcher });
    gates = [openable(), openable()];
    gateEntered = 0;
    try {
      const width = 256;
      const data = new Float32Array(width).fill(3.5);
      const call = (into: Float32Array, signal?: AbortSignal) =>
        batched.infer('gated', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, width], data }], {
          outputs: [{ name: 'OUTPUT0', into }],
          ...(signal ? { signal } : {}),
        });
      // A first batch holds the only slot, so the next two callers wait together and go as one batch.
      const first = call(new Float32Array(width));
      await until(() => gateEntered === 1);
      const leaving = new Float32Array(width).fill(7);
      const staying = new Float32Array(width).fill(7);
      const controller = new AbortController();
      const left = call(leaving, controller.signal);
      const stays = call(staying);
      gates[0]?.resolve();
      await first;
      await until(() => gateEntered === 2);
      // That batch is at the server now: the first caller leaves, then the server answers both.
      controller.abort();
      expect((await failure(left)).code).toBe(ErrorCode.Cancelled);
      gates[1]?.resolve();
      expect((await stays).output('OUTPUT0').data).toBe(staying);
      expect(staying.every((value) => value === 3.5)).toBe(true);
      expect(batcher.stats().batches).toBe(2);
      expect(leaving.every((value) => value === 7)).toBe(true);
    } finally {
      for (const gate of gates) gate.resolve();
      await batched.close();
      await batcher.close();
    }
  });
});

/**
 * Echoes INPUT0 as OUTPUT0 and writes bound outputs into the caller's memory as the real transports
 * do; fails INVALID_ARGUMENT for any request holding the value POISONED, and holds any request with
 * the value HELD until `held` is run, so that bisection has a half still in flight.
 */
const POISONED = 13;
const HELD = 99;
class BisectedTransport implements InferTransport {
  readonly held: (() => void)[] = [];

  async infer(request: InferRequest, options: CallOptions = {}): Promise<InferResponse> {
    await Promise.resolve();
    const input = request.inputs[0] as InferRequest['inputs'][number];
    const values = new Float32Array(input.raw.slice().buffer);
    if (values.includes(POISONED)) throw new InfergateError(ErrorCode.InvalidArgument, 'poisoned row');
    if (values.includes(HELD)) await new Promise<void>((resume) => this.held.push(resume));
    const output = { name: 'OUTPUT0', datatype: 'FP32' as const, shape: input.shape, raw: input.raw };
    const response = { model: request.model, modelVersion: '1', id: '', parameters: {}, outputs: [output] };
    return writeOutputsInto(request, response, { signal: options.signal });
  }

  async *stream(request: InferRequest, options: CallOptions): AsyncIterable<InferResponse> {
    yield await this.infer(request, options);
  }
}

describe('outputs into caller memory through a bisected batch', () => {
  // A member answered by its half of a bisected batch while another half is still in flight can
  // still leave: its call then fails, and must find its memory as it was.
  it.each([
    ['a half of several members', [1, 2, POISONED, HELD]],
    ['a half of one member', [1, POISONED, HELD]],
  ])('writes nothing for a member that left before the last half answered (%s)', async (_, seeds) => {
    const transport = new BisectedTransport();
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    try {
      const call = (seed: number, into: Float32Array, signal?: AbortSignal) =>
        batcher.infer(
          {
            model: 'm',
            inputs: [
              {
                name: 'INPUT0',
                datatype: 'FP32',
                shape: [1, 1],
                raw: new Uint8Array(new Float32Array([seed]).buffer),
              },
            ],
            outputs: [{ name: 'OUTPUT0', into }],
          },
          signal === undefined ? {} : { signal },
        );
      const memory = seeds.map(() => new Float32Array(1).fill(7));
      const leaving = new AbortController();
      // The first call goes alone (the slot is free); the others form one batch behind it.
      const lone = call(50, new Float32Array(1));
      const calls = seeds.map((seed, index) =>
        call(seed, memory[index] as Float32Array, index === 0 ? leaving.signal : undefined),
      );
      await lone;
      await until(() => transport.held.length === 1);
      leaving.abort();
      const left = await Promise.allSettled([calls[0] as Promise<InferResponse>]);
      expect(((left[0] as PromiseRejectedResult).reason as InfergateError).code).toBe(ErrorCode.Cancelled);
      for (const resume of transport.held) resume();
      const settled = await Promise.allSettled(calls);
      expect(settled.map((result) => result.status)).toEqual(
        seeds.map((seed, index) => (index === 0 || seed === POISONED ? 'rejected' : 'fulfilled')),
      );
      expect(memory[0]?.[0]).toBe(7);
      seeds.forEach((seed, index) => {
        if (index > 0 && seed !== POISONED) expect(memory[index]?.[0]).toBe(seed);
      });
    } finally {
      for (const resume of transport.held) resume();
      await batcher.close();
    }
  });
});

describe('refusals', () => {
  const identity = (outputs: readonly RequestedOutput[]) =>
    client.infer('identity', identityInput, { outputs });

  async function refusedUpFront(outputs: readonly RequestedOutput[], text: RegExp): Promise<void> {
    const before = server.calls.length;
    const error = await failure(identity(outputs));
    expect(error.code).toBe(ErrorCode.InvalidArgument);
    expect(error.message).toMatch(text);
    expect(server.calls.length).toBe(before);
  }

  it('refuses, before sending, `into` with shared memory, classification, overlapping memory or no view', async () => {
    const into = new Float32Array(ELEMENTS);
    await refusedUpFront(
      [{ name: 'OUTPUT0', into, sharedMemory: { region: 'r', byteSize: ELEMENTS * 4 } }],
      /either `into` or `sharedMemory`/,
    );
    await refusedUpFront([{ name: 'OUTPUT0', into, classCount: 2 }], /classification output/);
    const shared = new Float32Array(ELEMENTS * 2);
    await refusedUpFront(
      [
        { name: 'OUTPUT0', into: shared.subarray(0, ELEMENTS + 1) },
        { name: 'OUTPUT1', into: shared.subarray(ELEMENTS) },
      ],
      /overlaps/,
    );
    await refusedUpFront(
      [{ name: 'OUTPUT0', into: new ArrayBuffer(8) as unknown as Uint8Array }],
      /typed array, Buffer or DataView, got an ArrayBuffer/,
    );
  });

  it("refuses the same on a transport's own infer (a router's or batcher's way in), before sending", async () => {
    const http: HttpClient = createHttpClient({ url: server.httpUrl as string });
    try {
      const before = server.calls.length;
      const into = new Float32Array(ELEMENTS);
      const request = {
        model: 'identity',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'FP32' as const,
            shape: [1, ELEMENTS],
            raw: new Uint8Array(input.buffer),
          },
        ],
        outputs: [{ name: 'OUTPUT0', into, sharedMemory: { region: 'r', byteSize: ELEMENTS * 4 } }],
      };
      for (const transport of [http.http, client.grpc]) {
        const error = await failure(transport.infer(request, {}));
        expect(error.code).toBe(ErrorCode.InvalidArgument);
        expect(error.message).toMatch(/either `into` or `sharedMemory`/);
      }
      expect(server.calls.length).toBe(before);
    } finally {
      await http.close();
    }
  });

  it('refuses `into` on a stream before sending', async () => {
    const before = server.calls.length;
    const stream = client.inferStream('identity', identityInput, {
      outputs: [{ name: 'OUTPUT0', into: new Float32Array(ELEMENTS) }],
    });
    const error = await failure(
      (async () => {
        for await (const _ of stream) return;
      })(),
    );
    expect(error.code).toBe(ErrorCode.InvalidArgument);
    expect(error.message).toMatch(/for unary calls/);
    expect(server.calls.length).toBe(before);
  });

  it("refuses `into` on every transport's `stream` before sending, the HTTP one's too", async () => {
    const http: HttpClient = createHttpClient({ url: server.httpUrl as string });
    try {
      const before = server.calls.length;
      const request = {
        model: 'identity',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'FP32' as const,
            shape: [1, ELEMENTS],
            raw: new Uint8Array(input.buffer),
          },
        ],
        outputs: [{ name: 'OUTPUT0', into: new Float32Array(ELEMENTS) }],
      };
      for (const transport of [http.http, client.grpc]) {
        const error = await failure(
          (async () => {
            for await (const _ of transport.stream(request, {})) return;
          })(),
        );
        expect(error.code).toBe(ErrorCode.InvalidArgument);
        expect(error.message).toMatch(/for unary calls/);
      }
      expect(server.calls.length).toBe(before);
    } finally {
      await http.close();
    }
  });

  it('fails an answer bigger than `into` with OUT_OF_RANGE naming both sizes, writing nothing', async () => {
    const into = new Float32Array(ELEMENTS - 1).fill(7);
    const error = await failure(identity([{ name: 'OUTPUT0', into }]));
    expect(error.code).toBe(ErrorCode.OutOfRange);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain(`output 'OUTPUT0' is ${ELEMENTS * 4} bytes`);
    expect(error.message).toContain(`holds ${(ELEMENTS - 1) * 4}`);
    expect(error.message).toContain('the server ran the request');
    expect(error.details).toEqual({
      output: 'OUTPUT0',
      outputBytes: ELEMENTS * 4,
      intoBytes: (ELEMENTS - 1) * 4,
    });
    expect(into.every((value) => value === 7)).toBe(true);
    // Where it happened, as on the call's other failures: the endpoint and the request id.
    const http: HttpClient = createHttpClient({ url: server.httpUrl as string });
    try {
      for (const [target, endpoint] of [
        [client, server.url.split(':').pop() as string],
        [http, (server.httpUrl as string).split(':').pop() as string],
      ] as const) {
        const placed = await failure(
          target.infer('identity', identityInput, { requestId: 'r-7', outputs: [{ name: 'OUTPUT0', into }] }),
        );
        expect(placed.code).toBe(ErrorCode.OutOfRange);
        expect(placed.model).toBe('identity');
        expect(placed.requestId).toBe('r-7');
        expect(placed.endpoint).toContain(endpoint);
        expect(placed.details).toEqual(error.details);
      }
    } finally {
      await http.close();
    }
  });

  it('fails typed for BYTES, a typed array of another datatype, and memory misaligned for it', async () => {
    const bytes = await failure(
      client.infer('identity', [{ name: 'INPUT0', datatype: 'BYTES', data: ['a', 'bc'] }], {
        outputs: [{ name: 'OUTPUT0', into: new Uint8Array(64) }],
      }),
    );
    expect(bytes.code).toBe(ErrorCode.InvalidArgument);
    expect(bytes.message).toMatch(/is BYTES, of variable length/);
    const other = await failure(identity([{ name: 'OUTPUT0', into: new Int32Array(ELEMENTS) }]));
    expect(other.code).toBe(ErrorCode.InvalidArgument);
    expect(other.message).toMatch(/is FP32, which `into` \(a Int32Array\) cannot view: give a Float32Array/);
    const misaligned = Buffer.alloc(ELEMENTS * 4 + 2).subarray(2);
    const aligned = await failure(identity([{ name: 'OUTPUT0', into: misaligned }]));
    expect(aligned.code).toBe(ErrorCode.InvalidArgument);
    expect(aligned.message).toMatch(/byte offset \d+ of its buffer, not a multiple of 4/);
  });

  it('checks every bound output before writing any: a failing call leaves all of the memory as it was', async () => {
    const fits = new Float32Array(ELEMENTS).fill(7);
    const tooSmall = new Float32Array(ELEMENTS - 1).fill(7);
    const error = await failure(
      client.infer('two_outputs', [{ name: 'INPUT0', datatype: 'FP32', data: input }], {
        outputs: [
          { name: 'OUTPUT0', into: fits },
          { name: 'OUTPUT1', into: tooSmall },
        ],
      }),
    );
    expect(error.code).toBe(ErrorCode.OutOfRange);
    expect(error.message).toContain("output 'OUTPUT1'");
    expect(fits.every((value) => value === 7)).toBe(true);
    expect(tooSmall.every((value) => value === 7)).toBe(true);
  });

  it('fails DATA_LOSS for an answer that leaves out a bound output, on any transport', () => {
    // The caller reads `into` itself: a call that succeeded without writing it would leave the last
    // call's values there, unnoticed. (The gRPC transport checks every requested output; HTTP and
    // custom transports rely on this.)
    const into = new Float32Array(2).fill(7);
    const other = new Float32Array(2).fill(7);
    const request = {
      model: 'identity',
      inputs: [],
      outputs: [
        { name: 'OUTPUT0', into },
        { name: 'OUTPUT1', into: other },
      ],
    };
    const response = {
      model: 'identity',
      modelVersion: '1',
      id: '',
      parameters: {},
      outputs: [
        {
          name: 'OUTPUT0',
          datatype: 'FP32' as const,
          shape: [2],
          raw: new Uint8Array(new Float32Array([1, 2]).buffer),
        },
      ],
    };
    let thrown: unknown;
    try {
      writeOutputsInto(request, response);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InfergateError);
    expect((thrown as InfergateError).code).toBe(ErrorCode.DataLoss);
    expect((thrown as InfergateError).message).toContain("'OUTPUT1'");
    expect([...into, ...other]).toEqual([7, 7, 7, 7]);
  });

  it('fails DATA_LOSS, writing nothing, for an answer that carries a bound output twice', () => {
    // Both copies would go into the one `into`, the second over the first, while the result
    // describes the first: its shape over the second's bytes.
    const into = new Float32Array(4).fill(7);
    const request = { model: 'identity', inputs: [], outputs: [{ name: 'OUTPUT0', into }] };
    const tensor = (values: number[]) => ({
      name: 'OUTPUT0',
      datatype: 'FP32' as const,
      shape: [values.length],
      raw: new Uint8Array(new Float32Array(values).buffer),
    });
    const response = {
      model: 'identity',
      modelVersion: '1',
      id: '',
      parameters: {},
      outputs: [tensor([1, 2]), tensor([3, 4, 5, 6])],
    };
    let thrown: unknown;
    try {
      writeOutputsInto(request, response);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InfergateError);
    expect((thrown as InfergateError).code).toBe(ErrorCode.DataLoss);
    expect((thrown as InfergateError).message).toContain("'OUTPUT0'");
    expect([...into]).toEqual([7, 7, 7, 7]);
  });

  it("writes nothing for an answer whose call was abandoned (a hedging router's losing attempt)", () => {
    const into = new Float32Array(4).fill(7);
    const raw = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
    const request = { model: 'identity', inputs: [], outputs: [{ name: 'OUTPUT0', into }] };
    const response = {
      model: 'identity',
      modelVersion: '1',
      id: '',
      parameters: {},
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32' as const, shape: [4], raw }],
    };
    const controller = new AbortController();
    controller.abort();
    let thrown: unknown;
    try {
      writeOutputsInto(request, response, { signal: controller.signal });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InfergateError);
    expect((thrown as InfergateError).code).toBe(ErrorCode.Cancelled);
    expect(into.every((value) => value === 7)).toBe(true);
    // Not abandoned: written.
    expect(
      writeOutputsInto(request, response, { signal: new AbortController().signal }).outputs[0]?.raw.buffer,
    ).toBe(into.buffer);
    expect([...into]).toEqual([1, 2, 3, 4]);
  });
});
