// A micro-batcher under a router refuses a call whose deadline is closer than its batches take,
// before sending it. The router falls back without blaming that target: it is not counted as a
// failure (its breaker stays closed), not cooled, and the call is answered by the other target.
import { createMicroBatcher } from '@infergate/batcher';
import { buildInferRequest, createTritonClient, ErrorCode, InfergateError } from '@infergate/core';
import { classifyError, createRouter } from '@infergate/router';
import { startTestServer } from '@infergate/testing';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const request = (value: number) =>
  buildInferRequest('simulated_gpu', [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4).fill(value) },
  ]);

describe('a batcher that finds the deadline too close, under a router', () => {
  it('falls back to the other target without counting a failure against the batcher’s target', async () => {
    // a's model takes 1.5 s a batch; b's 2 ms.
    const slow = await startTestServer({ simulatedGpu: { baseMs: 1500 } });
    const fast = await startTestServer();
    cleanups.push(
      () => slow.stop(),
      () => fast.stop(),
    );
    const clientA = createTritonClient({ url: slow.url, enableGpuIpc: false });
    const clientB = createTritonClient({ url: fast.url, enableGpuIpc: false });
    cleanups.push(
      () => clientA.close(),
      () => clientB.close(),
    );
    const batcherA = createMicroBatcher(clientA.grpc, { client: clientA });
    cleanups.push(() => batcherA.close());
    // a's batcher learns how long its batches take (it trusts three batches).
    for (let i = 0; i < 3; i++) await batcherA.infer(request(i), { timeoutMs: 30_000 });
    const ranOnA = slow.gpu.stats().executions;
    expect(ranOnA).toBe(3);

    const router = createRouter({
      targets: [
        { name: 'a', transport: batcherA },
        { name: 'b', transport: clientB.grpc },
      ],
    });
    cleanups.push(() => router.close());
    const outcomes: string[] = [];
    router.on('attempt', (event) => outcomes.push(`${event.target}:${event.outcome}`));
    // 40 calls with 1.2 s left each: less than a's batches take, plenty for b even on a busy machine.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => router.infer(request(i), { timeoutMs: 1200 })),
    );
    expect(answers).toHaveLength(40);
    expect(outcomes.filter((outcome) => outcome === 'a:too-late')).toHaveLength(40);
    expect(outcomes.filter((outcome) => outcome === 'b:success')).toHaveLength(40);
    expect(outcomes).toHaveLength(80);
    // Nothing was sent to a, and a was not blamed: 40 failures in a row would have opened it.
    expect(slow.gpu.stats().executions).toBe(ranOnA);
    expect(router.breakerStates().a?.kind).toBe('closed');
  });

  it('classifies the batcher’s refusal as too-late, and any other DEADLINE_EXCEEDED as a failure', () => {
    const refused = new InfergateError(ErrorCode.DeadlineExceeded, 'too close', {
      details: { reason: 'deadline-too-close', leftMs: 3, expectedMs: 40 },
    });
    expect(classifyError(refused)).toBe('too-late');
    expect(classifyError(new InfergateError(ErrorCode.DeadlineExceeded, 'timed out'))).toBe('failure');
    expect(classifyError(refused, true)).toBe('cancelled');
  });
});
