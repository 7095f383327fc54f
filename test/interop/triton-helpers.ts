// Small helpers shared by the Triton interop test files (no server state here; see shared-triton.ts).
import { InfergateError, type InferResult } from '@infergate/core';
import { expect } from 'vitest';

/** Awaits `promise`, expects it to reject with an InfergateError and returns that error. */
export async function caught(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    return error as InfergateError;
  }
  throw new Error('expected the call to fail');
}

/** Every element of output `name` over a stream of results. */
export async function collect(iterable: AsyncIterable<InferResult>, name = 'OUT'): Promise<unknown[]> {
  const values: unknown[] = [];
  for await (const result of iterable) values.push(...result.output(name).toArray());
  return values;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Input of `slow_queue` (200 ms per request, max_batch_size 1). */
export const slowInput = (value = 1) => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 1], data: [value] },
];

/** Inputs of the decoupled `repeat`: `count` responses, `delayMs` apart. */
export const repeatInputs = (count: number, delayMs?: number) => [
  { name: 'IN', datatype: 'INT32' as const, data: [count] },
  ...(delayMs !== undefined ? [{ name: 'DELAY_MS', datatype: 'INT32' as const, data: [delayMs] }] : []),
];
