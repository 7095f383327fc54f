import { ErrorCode, InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const one = (seed: number) => requestOf('m', fp32('INPUT0', 1, 1, seed));

describe('errors and pass-through', () => {
  it('gives every member a transport failure with the same code and the original as cause', async () => {
    const original = new InfergateError(ErrorCode.Unavailable, 'connection refused', { endpoint: 'x:1' });
    let calls = 0;
    const transport = new EchoTransport({
      fail: () => {
        calls += 1;
        return calls === 1 ? undefined : original;
      },
    });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const results = await Promise.allSettled([0, 1, 2].map((seed) => batcher.infer(one(seed))));
    expect(results[0]?.status).toBe('fulfilled');
    for (const result of results.slice(1)) {
      expect(result.status).toBe('rejected');
      const error = (result as PromiseRejectedResult).reason as InfergateError;
      expect(error).toMatchObject({ code: ErrorCode.Unavailable, retryable: true, endpoint: 'x:1' });
      expect(error.cause).toBe(original);
    }
    expect(transport.calls).toHaveLength(2);
    await batcher.close();
  });

  it('fails every member with INTERNAL when an output does not carry the batch dimension', async () => {
    const transport = new EchoTransport({
      mapResponse: (response) => ({
        ...response,
        outputs: response.outputs.map((output) => ({ ...output, shape: [1, ...output.shape] })),
      }),
    });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const results = await Promise.allSettled([0, 1, 2].map((seed) => batcher.infer(one(seed))));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: ErrorCode.Internal });
    expect(String((results[1] as PromiseRejectedResult).reason.message)).toContain('first dimension');
    await batcher.close();
  });

  it('passes through streams, scalar inputs, sequences and shared-memory inputs', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport);
    for await (const _ of batcher.stream(one(0), {})) {
      // one response
    }
    await batcher.infer(requestOf('m', { name: 'S', datatype: 'FP32', shape: [], raw: new Uint8Array(4) }));
    await batcher.infer({ ...one(1), parameters: { sequence_id: 7 } });
    await batcher.infer(
      requestOf('m', {
        ...fp32('INPUT0', 1, 1, 0),
        parameters: { shared_memory_region: 'r', shared_memory_byte_size: 4 },
      }),
    );
    expect(batcher.stats()).toMatchObject({ passedThrough: 4, batches: 0 });
    expect(transport.streams).toBe(1);
    await batcher.close();
  });

  it('keeps calls with different layouts, outputs or parameters in different batches', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const answers = [
      batcher.infer(one(0)),
      batcher.infer(one(1)),
      batcher.infer(requestOf('m', fp32('INPUT0', 1, 2, 2))),
      batcher.infer({ ...one(3), outputs: [{ name: 'INPUT0' }] }),
      batcher.infer({ ...one(4), parameters: { flavour: 'x' } }),
      batcher.infer(one(5)),
    ];
    while (transport.held > 0 || batcher.stats().queued > 0) {
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 2, 1, 1, 1]);
    await batcher.close();
  });
});
