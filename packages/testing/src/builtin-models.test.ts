import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer({ simulatedGpu: { baseMs: 5, perRowMs: 0.1, maxBatchSize: 8 } });
  client = createTritonClient({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

async function rejection(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    return error as InfergateError;
  }
  throw new Error('expected the call to fail');
}

describe('identity', () => {
  it('echoes FP32 data, shape and datatype and the request id', async () => {
    const result = await client.infer(
      'identity',
      [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] }],
      { requestId: 'req-7' },
    );
    expect(result.id).toBe('req-7');
    expect(result.modelVersion).toBe('1');
    const output = result.output('OUTPUT0');
    expect(output.datatype).toBe('FP32');
    expect(output.shape).toEqual([2, 2]);
    expect(Array.from(output.data as Float32Array)).toEqual([1, 2, 3, 4]);
  });

  it('echoes whatever datatype it is sent, even though its config says TYPE_FP32', async () => {
    const ints = await client.infer('identity', [{ name: 'INPUT0', datatype: 'INT64', data: [1n, -2n] }]);
    expect(ints.output('OUTPUT0').datatype).toBe('INT64');
    expect(Array.from(ints.output('OUTPUT0').data as BigInt64Array)).toEqual([1n, -2n]);
    const bools = await client.infer('identity', [{ name: 'INPUT0', datatype: 'BOOL', data: [true, false] }]);
    expect(bools.output('OUTPUT0').toArray()).toEqual([true, false]);
  });

  it('echoes BYTES elements', async () => {
    const result = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'BYTES', shape: [1, 3], data: ['héllo', '', 'wörld'] },
    ]);
    expect(result.output('OUTPUT0').shape).toEqual([1, 3]);
    expect(result.output('OUTPUT0').strings()).toEqual(['héllo', '', 'wörld']);
  });

  it('handles 0-d and empty tensors', async () => {
    const scalar = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [], data: [42] },
    ]);
    expect(scalar.output('OUTPUT0').shape).toEqual([]);
    expect(Array.from(scalar.output('OUTPUT0').data as Float32Array)).toEqual([42]);
    const empty = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 0], data: [] },
    ]);
    expect(empty.output('OUTPUT0').shape).toEqual([1, 0]);
    expect((empty.output('OUTPUT0').data as Float32Array).length).toBe(0);
    const emptyBytes = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'BYTES', shape: [0], data: [] },
    ]);
    expect(emptyBytes.output('OUTPUT0').strings()).toEqual([]);
  });

  it('passes a 64 MiB FP32 tensor through', async () => {
    const data = new Float32Array(16 * 1024 * 1024);
    data[0] = 1.5;
    data[data.length - 1] = -2.5;
    const result = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, data.length], data },
    ]);
    const output = result.output('OUTPUT0').data as Float32Array;
    expect(output.length).toBe(data.length);
    expect(output[0]).toBe(1.5);
    expect(output[data.length - 1]).toBe(-2.5);
  });
});

describe('add_sub', () => {
  const a = Array.from({ length: 16 }, (_, i) => i);
  const b = Array.from({ length: 16 }, () => 1);

  it('returns the sum and the difference', async () => {
    const result = await client.infer('add_sub', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: b },
    ]);
    expect(result.output('OUTPUT0').shape).toEqual([1, 16]);
    expect(result.output('OUTPUT0').toArray()).toEqual(a.map((x) => x + 1));
    expect(result.output('OUTPUT1').toArray()).toEqual(a.map((x) => x - 1));
  });

  it('returns only the requested outputs', async () => {
    const result = await client.infer(
      'add_sub',
      [
        { name: 'INPUT0', datatype: 'FP32', shape: [2, 16], data: [...a, ...a] },
        { name: 'INPUT1', datatype: 'FP32', shape: [2, 16], data: [...b, ...b] },
      ],
      { outputs: ['OUTPUT1'] },
    );
    expect(result.outputs.map((output) => output.name)).toEqual(['OUTPUT1']);
    expect(result.output('OUTPUT1').shape).toEqual([2, 16]);
  });

  it('requires the batch dimension, as Triton does with max_batch_size > 0', async () => {
    const error = await rejection(
      client.infer('add_sub', [
        { name: 'INPUT0', datatype: 'FP32', shape: [16], data: a },
        { name: 'INPUT1', datatype: 'FP32', shape: [16], data: b },
      ]),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(
      "unexpected shape for input 'INPUT0' for model 'add_sub'. Expected [-1,16], got [16]",
    );
  });
});

describe('simulated_gpu', () => {
  it('doubles its input and counts rows and the largest batch', async () => {
    const before = server.stats('simulated_gpu');
    const result = await client.infer('simulated_gpu', [
      { name: 'INPUT0', datatype: 'FP32', shape: [3, 2], data: [1, 2, 3, 4, 5, 6] },
    ]);
    expect(result.output('OUTPUT0').toArray()).toEqual([2, 4, 6, 8, 10, 12]);
    const after = server.stats('simulated_gpu');
    expect(after.executions - before.executions).toBe(1);
    expect(after.rows - before.rows).toBe(3);
    expect(after.maxBatchSize).toBeGreaterThanOrEqual(3);
  });

  it('runs executions one at a time, in a queue', async () => {
    const gpuBefore = server.gpu.stats();
    const calls = Array.from({ length: 6 }, (_, i) =>
      client.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [i] }]),
    );
    const results = await Promise.all(calls);
    expect(results.map((result) => result.output('OUTPUT0').toArray()[0])).toEqual([0, 2, 4, 6, 8, 10]);
    const gpu = server.gpu.stats();
    expect(gpu.executions - gpuBefore.executions).toBe(6);
    // Six calls at once, never more than one execution at a time: they queued.
    expect(gpu.maxConcurrent).toBe(1);
  });

  it('rejects batches above its max batch size', async () => {
    const error = await rejection(
      client.infer('simulated_gpu', [
        { name: 'INPUT0', datatype: 'FP32', shape: [9, 1], data: new Float32Array(9) },
      ]),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain("inference request batch-size must be <= 8 for 'simulated_gpu'");
  });
});

describe('fail', () => {
  it('answers with the status the request parameters ask for', async () => {
    const error = await rejection(
      client.infer('fail', [], { parameters: { fail_code: 14, fail_message: 'try later' } }),
    );
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('try later');
    expect((await rejection(client.infer('fail', []))).code).toBe('INTERNAL');
  });

  it('succeeds with fail_code 0, after delay_ms', async () => {
    const result = await client.infer('fail', [{ name: 'INPUT0', datatype: 'INT32', data: [7] }], {
      parameters: { fail_code: 0, delay_ms: 30 },
    });
    expect(result.output('OUTPUT0').toArray()).toEqual([7]);
    // delay_ms holds the answer: a minute's delay outlasts a 100 ms deadline, however busy the machine.
    const held = await rejection(
      client.infer('fail', [], { parameters: { fail_code: 0, delay_ms: 60_000 }, timeoutMs: 100 }),
    );
    expect(held.code).toBe('DEADLINE_EXCEEDED');
  });
});

describe('generate', () => {
  it('answers a request that names no outputs with the outputs it produced, as Triton does', async () => {
    const texts: string[] = [];
    for await (const result of client.inferStream('generate', [
      { name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hello there'] },
    ])) {
      const names = result.outputs.map((output) => output.name);
      expect(names).not.toContain('num_input_tokens');
      texts.push(...result.output('text_output').strings());
    }
    expect(texts.join('')).toContain('hello');
  });
});
