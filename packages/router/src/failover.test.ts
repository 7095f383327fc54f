import {
  buildInferRequest,
  type ConnectivityListener,
  type ConnectivitySource,
  type ConnectivityState,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
} from '@infergate/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RouterConfig } from './config.js';
import { createRouter, type InferRouter } from './infer-router.js';

type Answer = InferResponse | InfergateError;

interface FakeTarget extends InferTransport {
  readonly calls: number;
}

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
const unavailable = () => new InfergateError(ErrorCode.Unavailable, 'connection refused');
const queueFull = () => new InfergateError(ErrorCode.QueueFull, 'the batcher queue is full');

/** An in-memory target that answers as `answer` says for its n-th call (from 1). */
function fakeTarget(answer: (call: number) => Answer | Promise<Answer>): FakeTarget {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    async infer() {
      calls += 1;
      const result = await answer(calls);
      if (result instanceof InfergateError) throw result;
      return result;
    },
    // biome-ignore lint/correctness/useYield: these targets never stream
    async *stream() {
      throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
    },
  };
}

/** A target that ignores its signal and answers after `ms`. */
function deafTarget(ms: number): FakeTarget {
  return fakeTarget(() => new Promise<Answer>((resolve) => setTimeout(() => resolve(ok('deaf')), ms)));
}

/** A channel whose state the test sets; `connect` requests are counted, not acted on. */
function fakeChannel(): ConnectivitySource & { set(to: ConnectivityState): void; dials: number } {
  let state: ConnectivityState = 'ready';
  const listeners = new Set<ConnectivityListener>();
  const channel = {
    dials: 0,
    connectivityState(connect = false) {
      if (connect) channel.dials += 1;
      return state;
    },
    watchConnectivity(listener: ConnectivityListener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(to: ConnectivityState) {
      const from = state;
      state = to;
      for (const listener of [...listeners]) listener({ from, to });
    },
  };
  return channel;
}

const routers: InferRouter[] = [];
function router(config: RouterConfig): InferRouter {
  const created = createRouter(config);
  routers.push(created);
  return created;
}

afterEach(async () => {
  for (const created of routers.splice(0)) await created.close();
  vi.useRealTimers();
});

describe('a dead endpoint leaves rotation at once', () => {
  it('trips after a few gateway failures in a row, however many successes came before', async () => {
    let dead = false;
    const a = fakeTarget(() => (dead ? unavailable() : ok('a')));
    const b = fakeTarget(() => ok('b'));
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
    });
    for (let i = 0; i < 200; i++) await routed.infer(request);
    dead = true;
    for (let i = 0; i < 20; i++) expect((await routed.infer(request)).id).toBe('b');
    // 3 refusals (consecutiveGatewayFailures) and a is out: 200 successes did not dilute them.
    expect(a.calls).toBe(203);
    expect(routed.breakerStates().a?.kind).toBe('open');
  });

  it('keeps a flaky endpoint in rotation when its failures are not in a row', async () => {
    const a = fakeTarget((call) => (call % 2 === 0 ? unavailable() : ok('a')));
    const b = fakeTarget(() => ok('b'));
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      breaker: { errorThresholdPercentage: 100 },
    });
    for (let i = 0; i < 20; i++) await routed.infer(request);
    expect(routed.breakerStates().a?.kind).toBe('closed');
    expect(a.calls).toBe(20);
  });

  it('never sends a retry back to the target that just failed while another can take the call', async () => {
    const a = fakeTarget(() => unavailable());
    // b is busy on its first answer, then has room.
    const b = fakeTarget((call) => (call === 1 ? queueFull() : ok('b')));
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      breaker: { consecutiveGatewayFailures: 0 },
    });
    const attempts: string[] = [];
    routed.on('attempt', (event) => attempts.push(`${event.target}:${event.outcome}`));
    expect((await routed.infer(request)).id).toBe('b');
    expect(attempts).toEqual(['a:failure', 'b:backpressure', 'b:success']);
  });
});

describe('a failure wave moves on without waiting for the breaker', () => {
  it("counts each failure in the same turn: a's breaker trips on the first, every call moves to b", async () => {
    // Eight calls in flight on a fail in one turn, as when its connection drops. The breaker's
    // rolling window counts each failure as it comes (no promise chain to wait for): the first one
    // trips a, and no call waits for any bookkeeping before it moves to b.
    const order: string[] = [];
    const held: ((error: InfergateError) => void)[] = [];
    const a: InferTransport = {
      infer: () => new Promise<InferResponse>((_resolve, reject) => held.push(reject)),
      stream: () => {
        throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
      },
    };
    const b = fakeTarget(() => {
      order.push('b');
      return ok('b');
    });
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      // INTERNAL is a failure but not a gateway failure: only the rolling window can trip a.
      breaker: { volumeThreshold: 1, errorThresholdPercentage: 1, consecutiveGatewayFailures: 0 },
    });
    routed.breaker('a').on('state-change', ({ to }) => order.push(`a:${to.kind}`));
    const calls = Array.from({ length: 8 }, () => routed.infer(request));
    await vi.waitFor(() => expect(held).toHaveLength(8), { timeout: 5_000 });
    for (const reject of held.splice(0)) reject(new InfergateError(ErrorCode.Internal, 'stream reset'));
    const answers = await Promise.all(calls);
    expect(answers.map((answer) => answer.id)).toEqual(Array(8).fill('b'));
    expect(b.calls).toBe(8);
    expect(order).toEqual(['a:open', ...Array(8).fill('b')]);
  });
});

describe('a lost connection moves new calls before its redial answers', () => {
  function lostSetup(bConfig: { admission?: { maxInFlight: number } } = {}) {
    const channel = fakeChannel();
    const a = fakeTarget(() => ok('a'));
    let release: (() => void) | undefined;
    const b = fakeTarget((call) =>
      call === 1 && bConfig.admission !== undefined
        ? new Promise<Answer>((resolve) => {
            release = () => resolve(ok('b'));
          })
        : ok('b'),
    );
    const routed = router({
      targets: [
        { name: 'a', transport: a, connectivity: channel },
        { name: 'b', transport: b },
      ],
      ...bConfig,
    });
    return { channel, a, b, routed, release: () => release?.() };
  }

  it('skips the lost target while another can take the call, without ejecting it, until it is ready', async () => {
    const { channel, a, routed } = lostSetup();
    expect((await routed.infer(request)).id).toBe('a');
    channel.set('idle'); // the peer closed the connection
    await new Promise((resolve) => setImmediate(resolve));
    expect(channel.dials).toBe(1); // redialled once that turn is over
    channel.set('connecting');
    for (let i = 0; i < 5; i++) expect((await routed.infer(request)).id).toBe('b');
    expect(a.calls).toBe(1);
    expect(routed.breakerStates().a?.kind).toBe('closed');
    channel.set('ready'); // the redial answered: a healthy endpoint that rotated its connection
    expect((await routed.infer(request)).id).toBe('a');
  });

  it('redials the lost target only after the calls that failed with its connection have moved on', async () => {
    const channel = fakeChannel();
    let failInFlight: ((error: InfergateError) => void) | undefined;
    const a = fakeTarget((call) =>
      call === 1
        ? ok('a')
        : new Promise<Answer>((resolve) => {
            failInFlight = resolve;
          }),
    );
    let dialsWhenBCalled: number | undefined;
    const b = fakeTarget(() => {
      dialsWhenBCalled ??= channel.dials;
      return ok('b');
    });
    const routed = router({
      targets: [
        { name: 'a', transport: a, connectivity: channel },
        { name: 'b', transport: b },
      ],
    });
    expect((await routed.infer(request)).id).toBe('a');
    const inFlight = routed.infer(request);
    for (let i = 0; i < 100 && failInFlight === undefined; i++) await Promise.resolve();
    // As a socket's close does, from an event-loop callback: the call on it fails, then the
    // channel reports the loss.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        failInFlight?.(unavailable());
        channel.set('idle');
        resolve();
      }),
    );
    expect((await inFlight).id).toBe('b');
    expect(dialsWhenBCalled).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(channel.dials).toBe(1);
  });

  it('still uses the lost target when no other candidate can take the call', async () => {
    const { channel, routed } = lostSetup();
    routed.breaker('b').eject('test: b is down too');
    channel.set('idle');
    expect((await routed.infer(request)).id).toBe('a');
  });

  it('falls back to the lost target when the others turn the call away after all', async () => {
    // b admits one call in flight; the first one holds it, so b refuses the second.
    const { channel, routed, release } = lostSetup({ admission: { maxInFlight: 1 } });
    channel.set('idle');
    const first = routed.infer(request);
    const second = await routed.infer(request);
    expect(second.id).toBe('a');
    release();
    expect((await first).id).toBe('b');
  });
});

describe('backpressure cools briefly and the call waits for room', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });

  it('waits for a busy target instead of failing the call, without spending a retry', async () => {
    const b = fakeTarget((call) => (call <= 3 ? queueFull() : ok('b')));
    const routed = router({
      targets: [{ name: 'b', transport: b }],
      retry: { maxRetries: 0 },
      random: () => 0,
    });
    const answer = routed.infer(request);
    await vi.advanceTimersByTimeAsync(10); // first cool-down: 10 ms
    await vi.advanceTimersByTimeAsync(20); // busy again right after: 20 ms
    await vi.advanceTimersByTimeAsync(40); // and again: 40 ms
    expect((await answer).id).toBe('b');
    expect(b.calls).toBe(4);
  });

  it('fails with the busy answer once capacityWaitMs is spent', async () => {
    const b = fakeTarget(() => queueFull());
    const routed = router({
      targets: [{ name: 'b', transport: b }],
      capacityWaitMs: 100,
      random: () => 0,
    });
    const answer = routed.infer(request);
    const settled = expect(answer).rejects.toMatchObject({ code: ErrorCode.QueueFull });
    await vi.advanceTimersByTimeAsync(1_000);
    await settled;
    // 10 + 20 + 40 ms of cooling fit in 100 ms; the next 80 ms do not.
    expect(b.calls).toBe(4);
  });

  it('never waits past the call deadline', async () => {
    const b = fakeTarget(() => queueFull());
    const routed = router({ targets: [{ name: 'b', transport: b }], random: () => 0 });
    const answer = routed.infer(request, { timeoutMs: 25 });
    const settled = expect(answer).rejects.toMatchObject({ code: ErrorCode.QueueFull });
    await vi.advanceTimersByTimeAsync(25);
    await settled;
    expect(b.calls).toBe(2); // at 0 and 10 ms; the 20 ms wait after it would end past the deadline
  });
});

describe('deadlines and aborts hold when a target ignores its signal', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });

  it('fails with DEADLINE_EXCEEDED at the call deadline, not when the target answers', async () => {
    const routed = router({ targets: [{ name: 'deaf', transport: deafTarget(3_000) }] });
    const order: string[] = [];
    const answer = routed.infer(request, { timeoutMs: 200 }).then(
      () => order.push('answered'),
      (error: InfergateError) => order.push(error.code),
    );
    await vi.advanceTimersByTimeAsync(200);
    order.push('200 ms');
    await vi.advanceTimersByTimeAsync(3_000);
    await answer;
    expect(order).toEqual([ErrorCode.DeadlineExceeded, '200 ms']);
  });

  it('ends an attempt at an attemptTimeoutMs beyond 2^31 − 1 ms when it is due, not before', async () => {
    const silent = fakeTarget(() => new Promise<Answer>(() => {}));
    const routed = router({
      targets: [{ name: 'silent', transport: silent }],
      attemptTimeoutMs: 3e9,
      retry: { maxRetries: 0 },
      // A rolling window as long, so that its rotation does not tick 3 million times here.
      breaker: { rollingWindowMs: 1e10, rollingBuckets: 1 },
    });
    const settled = vi.fn();
    const answer = routed.infer(request, { timeoutMs: 5e9 });
    answer.then(settled, settled);
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(3e9 - 2 ** 31 - 1);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(answer).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded });
  });

  it('fails with DEADLINE_EXCEEDED within attemptTimeoutMs and timeoutMs together', async () => {
    const routed = router({
      targets: [{ name: 'deaf', transport: deafTarget(3_000) }],
      attemptTimeoutMs: 100,
      retry: { maxRetries: 5, baseDelayMs: 0 },
    });
    const order: string[] = [];
    const answer = routed.infer(request, { timeoutMs: 200 }).catch((error: InfergateError) => {
      order.push(error.code);
    });
    await vi.advanceTimersByTimeAsync(200);
    order.push('200 ms');
    await vi.advanceTimersByTimeAsync(3_000);
    await answer;
    expect(order).toEqual([ErrorCode.DeadlineExceeded, '200 ms']);
  });

  it('fails with CANCELLED as soon as the caller aborts', async () => {
    const routed = router({ targets: [{ name: 'deaf', transport: deafTarget(3_000) }] });
    const controller = new AbortController();
    const order: string[] = [];
    const answer = routed.infer(request, { signal: controller.signal }).then(
      () => order.push('answered'),
      (error: InfergateError) => order.push(error.code),
    );
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    await vi.advanceTimersByTimeAsync(0);
    order.push('after abort');
    await vi.advanceTimersByTimeAsync(3_000);
    await answer;
    expect(order).toEqual([ErrorCode.Cancelled, 'after abort']);
    expect(routed.breakerStates().deaf?.kind).toBe('closed'); // the caller's abort blames nobody
  });
});

describe('the last candidate left for a call gets the rest of its deadline', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });

  /** Answers `ok(name)` after `ms` (ignoring its signal), recording the timeoutMs it was given. */
  function slowTarget(name: string, ms: number): FakeTarget & { timeouts: (number | undefined)[] } {
    const timeouts: (number | undefined)[] = [];
    const inner = fakeTarget(() => new Promise<Answer>((resolve) => setTimeout(() => resolve(ok(name)), ms)));
    return {
      timeouts,
      get calls() {
        return inner.calls;
      },
      infer(sent, options) {
        timeouts.push(options?.timeoutMs);
        return inner.infer(sent, options);
      },
      stream: inner.stream,
    };
  }

  it('a fallback slower than attemptTimeoutMs still answers the calls a blackhole sent it', async () => {
    const a = slowTarget('a', 60_000); // a blackhole: never answers within any deadline
    const b = slowTarget('b', 300); // healthy, but busy with the whole failover wave
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      attemptTimeoutMs: 100,
    });
    const answer = routed.infer(request, { timeoutMs: 2_000 }).then(
      (response) => response.id,
      (error: InfergateError) => error.code,
    );
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await answer).toBe('b');
    // a, with b behind it, was cut at the attempt timeout; b, the last one left, got the rest.
    expect(a.timeouts).toEqual([100]);
    expect(b.timeouts).toHaveLength(1);
    expect(b.timeouts[0]).toBeGreaterThan(100);
  });

  it('a last resort that hangs to the deadline counts against its breaker like a timed-out attempt', async () => {
    const a = fakeTarget(() => unavailable());
    const b = slowTarget('b', 60_000);
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      attemptTimeoutMs: 100,
    });
    const outcomes: string[] = [];
    routed.on('attempt', ({ target, outcome }) => outcomes.push(`${target}:${outcome}`));
    const answer = routed.infer(request, { timeoutMs: 500 }).catch((error: InfergateError) => error.code);
    await vi.advanceTimersByTimeAsync(500);
    expect(await answer).toBe(ErrorCode.DeadlineExceeded);
    expect(outcomes).toEqual(['a:failure', 'b:failure']);
  });

  it('without a call deadline the last resort keeps attemptTimeoutMs (every wait has a bound)', async () => {
    const a = fakeTarget(() => unavailable());
    const b = slowTarget('b', 60_000);
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      attemptTimeoutMs: 100,
      retry: { maxRetries: 0 },
    });
    const answer = routed.infer(request).catch((error: InfergateError) => error.code);
    await vi.advanceTimersByTimeAsync(100);
    expect(await answer).toBe(ErrorCode.DeadlineExceeded);
    expect(b.timeouts).toEqual([100]);
  });
});

describe('close', () => {
  it('stops the router but leaves the transports it was handed open', async () => {
    let closed = 0;
    const target: InferTransport = {
      ...fakeTarget(() => ok('a')),
      close: () => {
        closed += 1;
      },
    };
    const routed = createRouter({ targets: [{ name: 'a', transport: target }] });
    await routed.infer(request);
    await routed.close();
    await routed.close(); // idempotent
    expect(closed).toBe(0);
  });
});
