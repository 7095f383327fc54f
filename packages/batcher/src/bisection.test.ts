import { type EncodedTensor, ErrorCode, InfergateError, type InferRequest } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { EchoTransport, fp32, fp32Values, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const POISON = 13;

/** Fails INVALID_ARGUMENT whenever the batch carries the poisoned row (first value 13000). */
function poisoned(request: InferRequest): Error | undefined {
  const values = new Float32Array((request.inputs[0] as EncodedTensor).raw.slice().buffer);
  return values.includes(POISON * 1000)
    ? new InfergateError(ErrorCode.InvalidArgument, 'row 13 is poisoned', { model: request.model })
    : undefined;
}

async function runBatch(maxBisectRpcs?: number) {
  const transport = new EchoTransport({ fail: poisoned });
  const batcher = createMicroBatcher(transport, {
    maxInFlightBatches: 1,
    ...(maxBisectRpcs !== undefined ? { maxBisectRpcs } : {}),
  });
  const seeds = [100, 1, 2, 3, 4, POISON, 6, 7, 8];
  // The first call goes alone (slot free); the other eight form one batch behind it.
  const results = await Promise.allSettled(
    seeds.map((seed) => batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, seed)))),
  );
  await batcher.close();
  return { transport, batcher, seeds, results };
}

describe('bisection of INVALID_ARGUMENT batches', () => {
  it('fails only the poisoned call and answers the others', async () => {
    const { transport, batcher, seeds, results } = await runBatch();
    seeds.forEach((seed, index) => {
      const result = results[index];
      if (seed === POISON) {
        expect(result).toMatchObject({ status: 'rejected', reason: { code: ErrorCode.InvalidArgument } });
      } else {
        expect(result?.status).toBe('fulfilled');
        if (result?.status === 'fulfilled') expect(fp32Values(result.value)).toEqual([seed * 1000]);
      }
    });
    // 1 lone call + the batch of 8 + 3 levels of halving (2 RPCs each) down to the poisoned call.
    expect(transport.calls).toHaveLength(1 + 1 + 2 * 3);
    expect(batcher.stats().rpcs).toBe(8);
  });

  it('stops bisecting when its budget is spent and fails the undecided calls with the batch error', async () => {
    const { transport, seeds, results } = await runBatch(2);
    expect(transport.calls).toHaveLength(1 + 1 + 2);
    // The half without the poisoned call succeeds; the other half (4 calls) fails together.
    const failed = seeds.filter((_, index) => results[index]?.status === 'rejected');
    expect(failed).toEqual([POISON, 6, 7, 8]);
    const reason = (results[seeds.indexOf(6)] as PromiseRejectedResult).reason as InfergateError;
    expect(reason.code).toBe(ErrorCode.InvalidArgument);
    expect(reason.message).toContain('bisection budget');
    expect(reason.cause).toBeInstanceOf(InfergateError);
  });
});
