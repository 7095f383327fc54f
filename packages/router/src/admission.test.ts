import {
  buildInferRequest,
  CALL_SLO_CONTEXT,
  ErrorCode,
  InfergateError,
  withContextValue,
} from '@infergate/core';
import { describe, expect, it, vi } from 'vitest';
import { type FakeTarget, fakeTarget, routersPerTest } from '../../../test/unit/router-fakes.js';
import { createInferRouter } from './infer-router.js';

const request = buildInferRequest('m', [
  { name: 'IN', datatype: 'FP32', shape: [1], data: new Float32Array([1]) },
]);

/** A target that answers after `delayMs` of fake time, or holds calls until `release()`. */
const target = (name: string, delayMs: number | 'held'): FakeTarget =>
  fakeTarget(name, delayMs === 'held' ? { hold: true } : { delayMs });

const { router } = routersPerTest({ fakeTime: true });

/** Sends one call and lets fake time run until it settles. */
async function timed<R>(call: Promise<R>, ms: number): Promise<R> {
  await vi.advanceTimersByTimeAsync(ms);
  return call;
}

describe('deadline-aware admission', () => {
  it('fails a call whose deadline already passed without reaching any target', async () => {
    const only = target('only', 1);
    const routed = router({ targets: [{ name: 'only', transport: only }] });
    const signal = AbortSignal.abort(new InfergateError(ErrorCode.DeadlineExceeded, 'the request timed out'));
    await expect(routed.infer(request, { signal })).rejects.toMatchObject({
      code: ErrorCode.DeadlineExceeded,
    });
    expect(only.calls).toBe(0);
  });

  it('sends a call with a short deadline to the faster target', async () => {
    const slow = target('slow', 100);
    const fast = target('fast', 10);
    const routed = router({
      targets: [
        { name: 'slow', transport: slow },
        { name: 'fast', transport: fast },
      ],
      admission: { minSamples: 1 },
    });
    await timed(routed.infer(request), 100); // slow: 100 ms
    slow.down = true;
    await timed(routed.infer(request), 10); // slow refuses, fast: 10 ms
    slow.down = false;
    const before = slow.calls;
    const answer = await timed(routed.infer(request, { timeoutMs: 50 }), 10);
    expect(answer.id).toBe('fast');
    expect(slow.calls).toBe(before);
    // Without a deadline the fallback order stands.
    expect((await timed(routed.infer(request), 100)).id).toBe('slow');
  });

  it('fails fast with DEADLINE_EXCEEDED "cannot meet deadline" when every target is too slow', async () => {
    const a = target('a', 100);
    const b = target('b', 120);
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      balance: { strategy: 'least-in-flight' },
      admission: { minSamples: 2 },
    });
    await timed(Promise.all([1, 2, 3, 4].map(() => routed.infer(request))), 240);
    const calls = a.calls + b.calls;
    const error = await routed.infer(request, { timeoutMs: 50 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InfergateError);
    expect(error).toMatchObject({
      code: ErrorCode.DeadlineExceeded,
      details: { reason: 'cannot meet deadline', budgetMs: 50, expectedMs: { a: 100, b: 120 } },
    });
    expect(a.calls + b.calls).toBe(calls);
  });

  it("names every target in the refusal's expectedMs, also one named __proto__ or constructor", async () => {
    const proto = target('__proto__', 100);
    const ctor = target('constructor', 120);
    const routed = router({
      targets: [
        { name: '__proto__', transport: proto },
        { name: 'constructor', transport: ctor },
      ],
      balance: { strategy: 'least-in-flight' },
      admission: { minSamples: 2 },
    });
    await timed(Promise.all([1, 2, 3, 4].map(() => routed.infer(request))), 240);
    const error = await routed.infer(request, { timeoutMs: 50 }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      code: ErrorCode.DeadlineExceeded,
      details: { reason: 'cannot meet deadline' },
    });
    const { expectedMs } = (error as InfergateError).details as { expectedMs: Record<string, number> };
    expect(Object.getPrototypeOf(expectedMs)).toBe(Object.prototype);
    expect(Object.entries(expectedMs).sort(([a], [b]) => (a < b ? -1 : 1))).toEqual([
      ['__proto__', 100],
      ['constructor', 120],
    ]);
  });

  it('holds a call to its SLO, from the option or the call context, and rejects a bad one', async () => {
    const only = target('only', 80);
    const routed = router({ targets: [{ name: 'only', transport: only }], admission: { minSamples: 1 } });
    await timed(routed.infer(request), 80);
    await expect(routed.infer(request, { sloTtftMs: 40 })).rejects.toMatchObject({
      code: ErrorCode.DeadlineExceeded,
      details: { reason: 'cannot meet deadline' },
    });
    const context = withContextValue(undefined, CALL_SLO_CONTEXT, { ttftMs: 40 });
    await expect(routed.infer(request, { context })).rejects.toMatchObject({
      details: { reason: 'cannot meet deadline' },
    });
    expect(only.calls).toBe(1);
    expect((await timed(routed.infer(request, { sloTtftMs: 200 }), 80)).id).toBe('only');
    await expect(routed.infer(request, { sloTtftMs: -5 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
  });

  it('trusts no latency figure before minSamples answers', async () => {
    const only = target('only', 80);
    const routed = router({ targets: [{ name: 'only', transport: only }] });
    await timed(routed.infer(request), 80);
    // One answer of the default five: the call is sent, and times out as its deadline says.
    const call = routed.infer(request, { timeoutMs: 40 });
    const settled = expect(call).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded });
    await vi.advanceTimersByTimeAsync(40);
    await settled;
    expect(only.calls).toBe(2);
  });
});

describe('priority shedding', () => {
  it('sheds lower priorities first as a target fills up', async () => {
    const only = target('only', 'held');
    const routed = router({
      targets: [{ name: 'only', transport: only }],
      admission: { maxInFlight: 4, lowPriorityShare: 0.5 },
    });
    const low = [routed.infer(request, { priority: 2 }), routed.infer(request, { priority: 2 })];
    // Priority 2 may fill half of 4: the third is shed at once.
    await expect(routed.infer(request, { priority: 2 })).rejects.toMatchObject({
      code: ErrorCode.ResourceExhausted,
      details: { reason: 'overloaded', priority: 2 },
    });
    // Priority 1 (and unset) may fill all of it.
    const high = [routed.infer(request, { priority: 1 }), routed.infer(request)];
    await expect(routed.infer(request, { priority: 1 })).rejects.toMatchObject({
      code: ErrorCode.ResourceExhausted,
    });
    expect(only.calls).toBe(4);
    only.release();
    await Promise.all([...low, ...high]);
    // Room again once they finish.
    const again = routed.infer(request, { priority: 2 });
    await vi.waitFor(() => expect(only.calls).toBe(5));
    only.release();
    await again;
  });

  it('sends the overflow to another target before shedding', async () => {
    const a = target('a', 'held');
    const b = target('b', 'held');
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      admission: { maxInFlight: 1 },
    });
    const first = routed.infer(request);
    const second = routed.infer(request);
    await expect(routed.infer(request)).rejects.toMatchObject({ code: ErrorCode.ResourceExhausted });
    expect([a.calls, b.calls]).toEqual([1, 1]);
    a.release();
    b.release();
    expect((await Promise.all([first, second])).map((answer) => answer.id)).toEqual(['a', 'b']);
  });

  it('rejects a bad admission option with INVALID_ARGUMENT', () => {
    expect(() =>
      createInferRouter({
        targets: [{ name: 'a', transport: target('a', 1) }],
        admission: { maxInFlight: 0 },
      }),
    ).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
  });
});
