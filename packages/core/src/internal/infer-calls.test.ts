import { describe, expect, it } from 'vitest';
import { ErrorCode, InfergateError } from '../errors.js';
import { InferResult } from '../result.js';
import type { InferRequest, InferResponse, InferTransport } from '../transport.js';
import { inferThrough } from './infer-calls.js';

const input = { name: 'X', datatype: 'FP32', shape: [1, 1], data: new Float32Array([3]) } as const;

function transportOf(infer: (request: InferRequest) => unknown): InferTransport {
  return {
    infer: infer as InferTransport['infer'],
    stream: () => {
      throw new Error('not used');
    },
  };
}

const echo = (request: InferRequest): InferResponse => ({
  model: request.model,
  modelVersion: '1',
  id: request.id ?? '',
  outputs: request.inputs,
  parameters: {},
});

describe('inferThrough', () => {
  it('resolves with a result of the transport answer', async () => {
    const result = await inferThrough(
      transportOf((request) => Promise.resolve(echo(request))),
      'm',
      [input],
      { requestId: 'r' },
    );
    expect(result).toBeInstanceOf(InferResult);
    expect(result.id).toBe('r');
    expect(Array.from(result.output('X').data as Float32Array)).toEqual([3]);
  });

  it('rejects (never throws) when the inputs are invalid, without calling the transport', async () => {
    let called = false;
    const transport = transportOf(() => {
      called = true;
    });
    const pending = inferThrough(transport, 'm', [input, input], {});
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect(called).toBe(false);
  });

  it('rejects when the transport throws instead of rejecting', async () => {
    const failure = new InfergateError(ErrorCode.Unavailable, 'down');
    const pending = inferThrough(
      transportOf(() => {
        throw failure;
      }),
      'm',
      [input],
      {},
    );
    await expect(pending).rejects.toBe(failure);
  });

  it('gives a native promise when the transport answers with a thenable', async () => {
    const pending = inferThrough(
      transportOf((request) => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what this test is about.
        then: (resolve: (value: InferResponse) => void) => resolve(echo(request)),
      })),
      'm',
      [input],
      {},
    );
    expect(pending).toBeInstanceOf(Promise);
    expect((await pending).model).toBe('m');
  });
});
