// The plain call's path (no deadline, signal, hedge or sequence): the router's infer is not an async
// function and awaits each attempt in its routing loop, so what a target or the options throw
// synchronously must still end as the same rejection or fallback as a rejected promise would.
import {
  buildInferRequest,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
} from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createRouter, type InferRouter } from './infer-router.js';
import type { AttemptEvent } from './router-events.js';

const request: InferRequest = buildInferRequest('m', [
  { name: 'IN', datatype: 'FP32', shape: [1], data: new Float32Array([1]) },
]);
const ok = (from: string): InferResponse => ({
  model: 'm',
  modelVersion: '1',
  id: from,
  outputs: [],
  parameters: {},
});

/** A target whose `infer` is `answer` itself: it may throw before returning a promise. */
function target(answer: () => Promise<InferResponse>): InferTransport & { calls: number } {
  const made = {
    calls: 0,
    infer() {
      made.calls += 1;
      return answer();
    },
    // biome-ignore lint/correctness/useYield: these targets never stream
    async *stream() {
      throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
    },
  };
  return made;
}

const routers: InferRouter[] = [];
afterEach(async () => {
  for (const created of routers.splice(0)) await created.close();
});

describe('the plain call path', () => {
  it('moves on from a target that throws instead of returning a promise, and counts the failure', async () => {
    const a = target(() => {
      throw new InfergateError(ErrorCode.Unavailable, 'connection refused');
    });
    const b = target(() => Promise.resolve(ok('b')));
    const routed = createRouter({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      breaker: { consecutiveGatewayFailures: 1 },
    });
    routers.push(routed);
    const attempts: AttemptEvent[] = [];
    routed.on('attempt', (event) => attempts.push(event));
    expect((await routed.infer(request)).id).toBe('b');
    expect(attempts.map(({ target, outcome }) => `${target}:${outcome}`)).toEqual(['a:failure', 'b:success']);
    // The synchronous throw reached a's breaker as a gateway failure: a is out of rotation.
    expect(routed.breakerStates().a?.kind).toBe('open');
    expect((await routed.infer(request)).id).toBe('b');
    expect(a.calls).toBe(1);
  });

  it('rejects, never throws, when the call options are invalid', async () => {
    const routed = createRouter({
      targets: [{ name: 'a', transport: target(() => Promise.resolve(ok('a'))) }],
    });
    routers.push(routed);
    let pending: Promise<InferResponse> | undefined;
    expect(() => {
      pending = routed.infer(request, { affinityKey: '' });
    }).not.toThrow();
    await expect(pending).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
  });

  it('answers each caller with its own response, one attempt each, with the call in flight counted then released', async () => {
    let answered = 0;
    const a = target(() => Promise.resolve(ok(`a${++answered}`)));
    const routed = createRouter({ targets: [{ name: 'a', transport: a }] });
    routers.push(routed);
    const attempts: AttemptEvent[] = [];
    routed.on('attempt', (event) => attempts.push(event));
    const ids = (await Promise.all(Array.from({ length: 8 }, () => routed.infer(request)))).map(
      ({ id }) => id,
    );
    expect(new Set(ids).size).toBe(8);
    expect(attempts.every(({ attempt, outcome }) => attempt === 1 && outcome === 'success')).toBe(true);
    expect(attempts).toHaveLength(8);
  });

  /** A router over `a` then `b`, closed after the test. */
  function twoTargets(a: Parameters<typeof createRouter>[0]['targets'][number]['transport'], b: typeof a) {
    const routed = createRouter({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
    });
    routers.push(routed);
    return routed;
  }

  it("starts a plain call's first attempt in the same turn and, when it fails, carries the pass on to the next target", async () => {
    const a = target(() => Promise.reject(new InfergateError(ErrorCode.Unavailable, 'connection reset')));
    const b = target(() => Promise.resolve(ok('b')));
    const routed = twoTargets(a, b);
    const attempts: AttemptEvent[] = [];
    const fallbacks: string[] = [];
    routed.on('attempt', (event) => attempts.push(event));
    routed.on('fallback', ({ from, to, reason }) => fallbacks.push(`${from}->${to}:${reason}`));
    const pending = routed.infer(request);
    // Before anything was awaited: a was called, b not yet.
    expect([a.calls, b.calls]).toEqual([1, 0]);
    expect((await pending).id).toBe('b');
    expect(attempts.map(({ target, attempt, outcome }) => `${target}#${attempt}:${outcome}`)).toEqual([
      'a#1:failure',
      'b#2:success',
    ]);
    expect(fallbacks).toEqual(['a->b:failure']);
  });

  it('retries the one target in a new pass after its first attempt fails', async () => {
    let calls = 0;
    const a = target(() =>
      ++calls === 1
        ? Promise.reject(new InfergateError(ErrorCode.Unavailable, 'connection reset'))
        : Promise.resolve(ok('a')),
    );
    const routed = createRouter({
      targets: [{ name: 'a', transport: a }],
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    routers.push(routed);
    const attempts: AttemptEvent[] = [];
    routed.on('attempt', (event) => attempts.push(event));
    expect((await routed.infer(request)).id).toBe('a');
    expect(attempts.map(({ attempt, outcome }) => `${attempt}:${outcome}`)).toEqual([
      '1:failure',
      '2:success',
    ]);
  });

  it('rejects with the typed error of a first attempt the caller cannot retry, without another attempt', async () => {
    const a = target(() => Promise.reject(new InfergateError(ErrorCode.InvalidArgument, 'bad input')));
    const b = target(() => Promise.resolve(ok('b')));
    const routed = twoTargets(a, b);
    await expect(routed.infer(request)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect([a.calls, b.calls]).toEqual([1, 0]);
  });
});
