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

/**
 * Triton's count of `model`'s requests that wait in its scheduler (queued, or staged for a busy
 * instance; not the one executing), from its metrics endpoint.
 */
export async function pendingRequests(metricsAddress: string, model: string): Promise<number> {
  const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('nv_inference_pending_request_count{') && l.includes(`model="${model}"`));
  if (line === undefined)
    throw new Error(`no nv_inference_pending_request_count for ${model} at ${metricsAddress}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/**
 * Polls (bounded by `ms`) until at least `count` of `model`'s requests wait in Triton's scheduler;
 * false when they never did within the bound.
 */
export async function reachesPending(
  metricsAddress: string,
  model: string,
  count: number,
  ms = 2_000,
): Promise<boolean> {
  const until = Date.now() + ms;
  do {
    if ((await pendingRequests(metricsAddress, model)) >= count) return true;
    await sleep(2);
  } while (Date.now() < until);
  return false;
}

/** Inputs of the decoupled `repeat`: `count` responses, `delayMs` apart. */
export const repeatInputs = (count: number, delayMs?: number) => [
  { name: 'IN', datatype: 'INT32' as const, data: [count] },
  ...(delayMs !== undefined ? [{ name: 'DELAY_MS', datatype: 'INT32' as const, data: [delayMs] }] : []),
];
