import { createTritonClient } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from './model-definition.js';
import { MAX_POOLED_BYTES, MIN_POOLED_BYTES, RequestMemoryPool } from './request-memory-pool.js';
import { startTestServer } from './test-server.js';

describe('RequestMemoryPool', () => {
  it('hands a released block out again for a request of the same size class', () => {
    const pool = new RequestMemoryPool();
    const first = pool.allocate(1 << 20);
    expect(first.byteLength).toBe(1 << 20);
    pool.release(first.subarray(10, 20));
    const second = pool.allocate((1 << 20) - 100);
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteLength).toBe((1 << 20) - 100);
    expect([pool.made, pool.reused]).toEqual([1, 1]);
    // Not released: a fresh block.
    expect(pool.allocate(1 << 20).buffer).not.toBe(first.buffer);
  });

  it('takes back only the memory it made, once', () => {
    const pool = new RequestMemoryPool();
    pool.release(Buffer.allocUnsafeSlow(1 << 20));
    pool.release(Buffer.allocUnsafe(100));
    const block = pool.allocate(1 << 20);
    expect(pool.made).toBe(1);
    pool.release(block);
    pool.release(block);
    expect(pool.allocate(1 << 20).buffer).toBe(block.buffer);
    expect(pool.allocate(1 << 20).buffer).not.toBe(block.buffer);
  });

  it('keeps 64 blocks of a 1 MiB tensor’s request idle, as many as a client at c64 has in flight', () => {
    const pool = new RequestMemoryPool();
    // A 1 MiB tensor's ModelInfer request: a few hundred bytes of message around the tensor.
    const bytes = (1 << 20) + 300;
    const inFlight = Array.from({ length: 64 }, () => pool.allocate(bytes));
    for (const memory of inFlight) pool.release(memory);
    const again = Array.from({ length: 64 }, () => pool.allocate(bytes));
    expect([pool.made, pool.reused]).toEqual([64, 64]);
    expect(new Set(again.map((memory) => memory.buffer))).toEqual(
      new Set(inFlight.map((memory) => memory.buffer)),
    );
  });

  it('leaves small and very large requests to Node', () => {
    const pool = new RequestMemoryPool();
    const small = pool.allocate(MIN_POOLED_BYTES - 1);
    const large = pool.allocate(MAX_POOLED_BYTES + 1);
    pool.release(small);
    pool.release(large);
    expect(pool.made).toBe(0);
    expect(pool.allocate(MIN_POOLED_BYTES - 1).buffer).not.toBe(small.buffer);
  });
});

describe('large ModelInfer requests on the lean transport', () => {
  /** identity, noting the memory each request's input arrived in. */
  function recordingIdentity(seen: ArrayBufferLike[]): ModelDefinition {
    return {
      name: 'recording_identity',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
      execute(request) {
        const input = request.input('INPUT0');
        seen.push(input.raw.buffer);
        return [{ name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, raw: input.raw }];
      },
    };
  }

  it('reuse a request’s memory once its answer is written', async () => {
    const seen: ArrayBufferLike[] = [];
    const server = await startTestServer({ builtins: false, models: [recordingIdentity(seen)] });
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      for (let call = 0; call < 3; call++) {
        const data = new Float32Array(262_144).fill(call);
        const result = await client.infer('recording_identity', [
          { name: 'INPUT0', datatype: 'FP32', shape: [262_144], data },
        ]);
        const output = result.outputs[0]?.data as Float32Array | undefined;
        expect(output?.every((value) => value === call)).toBe(true);
      }
      expect(seen).toHaveLength(3);
      expect(new Set(seen).size).toBe(1);
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('keep the memory of a call cancelled during its execution out of the pool', async () => {
    const seen: ArrayBufferLike[] = [];
    const model: ModelDefinition = {
      ...recordingIdentity(seen),
      async execute(request, context) {
        const input = request.input('INPUT0');
        seen.push(input.raw.buffer);
        // The first call runs until the server has seen its cancellation, then returns anyway.
        if (seen.length === 1) {
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
        }
        return [{ name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, raw: input.raw }];
      },
    };
    const server = await startTestServer({ builtins: false, models: [model] });
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    const data = new Float32Array(262_144);
    const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [262_144], data }];
    try {
      const abort = new AbortController();
      const first = client.infer('recording_identity', inputs, { signal: abort.signal });
      const cancelled = first.then(
        () => 'answered',
        () => 'cancelled',
      );
      for (let i = 0; i < 500 && seen.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      abort.abort();
      expect(await cancelled).toBe('cancelled');
      await client.infer('recording_identity', inputs);
      await client.infer('recording_identity', inputs);
      expect(seen).toHaveLength(3);
      expect(seen[1]).not.toBe(seen[0]);
      expect(seen[2]).toBe(seen[1]);
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('answer concurrent calls each with their own values while memory is reused', async () => {
    const seen: ArrayBufferLike[] = [];
    const server = await startTestServer({ builtins: false, models: [recordingIdentity(seen)] });
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const caller = async (id: number) => {
        for (let round = 0; round < 6; round++) {
          const value = id * 100 + round;
          const data = new Float32Array(200_000).fill(value);
          const result = await client.infer('recording_identity', [
            { name: 'INPUT0', datatype: 'FP32', shape: [200_000], data },
          ]);
          const output = result.outputs[0]?.data as Float32Array | undefined;
          expect(output?.length).toBe(200_000);
          expect(output?.every((element) => element === value)).toBe(true);
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, id) => caller(id)));
      expect(seen).toHaveLength(48);
      expect(new Set(seen).size).toBeLessThan(48);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
