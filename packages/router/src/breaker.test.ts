import { ErrorCode, InfergateError } from '@infergate/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, type BreakerInit } from './breaker.js';
import { breakerOptionsSchema } from './config.js';

const breakers: Breaker[] = [];

function breaker(options: Record<string, unknown> = {}, init: Partial<BreakerInit> = {}): Breaker {
  const created = new Breaker({
    name: 'target',
    options: breakerOptionsSchema().parse({ volumeThreshold: 2, openMs: 1000, openJitter: 0, ...options }),
    random: () => 0.5,
    ...init,
  });
  breakers.push(created);
  return created;
}

async function fail(target: Breaker, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) await target.acquire()?.failure();
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  for (const created of breakers.splice(0)) created.dispose();
  vi.useRealTimers();
});

describe('Breaker', () => {
  it('opens after failing calls pass the threshold and volume', async () => {
    const target = breaker();
    await fail(target);
    expect(target.state.kind).toBe('closed'); // under the volume threshold
    await fail(target);
    expect(target.state).toMatchObject({ kind: 'open', trips: 1, halfOpenAt: 1_001_000 });
    expect(target.acquire()).toBeUndefined();
    expect(target.retryAfterMs).toBe(1000);
  });

  it('trips on the error rate of its rolling window: successes dilute it, old buckets age out', async () => {
    const diluted = breaker({ volumeThreshold: 4, consecutiveGatewayFailures: 0 });
    for (let i = 0; i < 4; i++) await diluted.acquire()?.success();
    await fail(diluted, 4);
    expect(diluted.state.kind).toBe('closed'); // 4 of 8: not more than 50 %
    await fail(diluted);
    expect(diluted.state.kind).toBe('open'); // 5 of 9

    const aged = breaker({ volumeThreshold: 4, rollingWindowMs: 1000, rollingBuckets: 10 });
    for (let i = 0; i < 10; i++) await aged.acquire()?.success();
    vi.advanceTimersByTime(1000); // every bucket rotated out
    await fail(aged, 3);
    expect(aged.state.kind).toBe('closed'); // 3 calls: under the volume threshold
    await fail(aged);
    expect(aged.state.kind).toBe('open'); // 4 of 4, the 10 successes forgotten
  });

  it('does not count neutral outcomes (backpressure, rejects) as failures', async () => {
    const target = breaker();
    for (let i = 0; i < 20; i++) await target.acquire()?.neutral();
    expect(target.state.kind).toBe('closed');
    expect(target.lastFailureAt).toBeUndefined();
  });

  it('half-opens after the open time and lets only the configured number of probes through', async () => {
    const target = breaker({ halfOpenMaxProbes: 2 });
    const changes: string[] = [];
    target.on('state-change', ({ to }) => changes.push(to.kind));
    await fail(target, 2);
    vi.advanceTimersByTime(1000);
    expect(target.state.kind).toBe('half-open');
    const first = target.acquire();
    const second = target.acquire();
    expect(first?.probe).toBe(true);
    expect(second?.probe).toBe(true);
    expect(target.acquire()).toBeUndefined();
    await second?.neutral(); // frees a slot without deciding
    const third = target.acquire();
    expect(third).toBeDefined();
    await first?.success();
    expect(target.state.kind).toBe('closed');
    await third?.failure(); // a probe of a finished half-open period decides nothing
    expect(target.state.kind).toBe('closed');
    expect(changes).toEqual(['open', 'half-open', 'closed']);
  });

  it('grows the open time with each failed probe, up to the cap', async () => {
    const target = breaker({ openMs: 100, maxOpenMs: 500, openMultiplier: 2 });
    await fail(target, 2);
    const durations: number[] = [];
    for (let i = 0; i < 5; i++) {
      const state = target.state;
      if (state.kind !== 'open') throw new Error(`expected open, got ${state.kind}`);
      durations.push(state.halfOpenAt - state.openedAt);
      vi.advanceTimersByTime(state.halfOpenAt - Date.now());
      await target.acquire()?.failure();
    }
    expect(durations).toEqual([100, 200, 400, 500, 500]);
  });

  it('applies jitter below the grown open time', async () => {
    const target = breaker({ openMs: 1000, openJitter: 0.2 }, { random: () => 1 });
    await fail(target, 2);
    const state = target.state;
    expect(state.kind === 'open' && state.halfOpenAt - state.openedAt).toBe(800);
  });

  it('forgets the failures that tripped it once it closes', async () => {
    const target = breaker();
    await fail(target, 2);
    vi.advanceTimersByTime(1000);
    await target.acquire()?.success();
    expect(target.state.kind).toBe('closed');
    await fail(target); // one failure in a fresh window is under the volume threshold
    expect(target.state.kind).toBe('closed');
  });

  it('keeps growing when it trips again soon after closing', async () => {
    const target = breaker({ openMs: 100 });
    await fail(target, 2);
    vi.advanceTimersByTime(100);
    await target.acquire()?.success();
    await fail(target, 2);
    const state = target.state;
    expect(state.kind === 'open' && [state.trips, state.halfOpenAt - state.openedAt]).toEqual([2, 200]);
  });

  it('exports its state and restores it (open stays open, then half-opens on time)', async () => {
    const original = breaker();
    await fail(original, 2);
    const saved = JSON.parse(JSON.stringify(original.toJSON()));
    expect(saved).toMatchObject({ version: 1, state: { kind: 'open', trips: 1 } });
    vi.advanceTimersByTime(400);
    const restored = breaker({}, { initialState: saved });
    expect(restored.state.kind).toBe('open');
    expect(restored.retryAfterMs).toBe(600);
    expect(restored.lastFailureAt).toBe(1_000_000);
    vi.advanceTimersByTime(600);
    expect(restored.state.kind).toBe('half-open');
    await restored.acquire()?.success();
    expect(restored.state.kind).toBe('closed');
    // A restored breaker still trips on its rolling window.
    await fail(restored, 2);
    expect(restored.state.kind).toBe('open');
  });

  it('restores an open state whose time is up as half-open', () => {
    const restored = breaker(
      {},
      {
        initialState: {
          version: 1,
          state: { kind: 'open', trips: 3, openedAt: 1, halfOpenAt: 2 },
          lastFailureAt: 1,
        },
      },
    );
    expect(restored.state).toMatchObject({ kind: 'half-open', trips: 3 });
  });

  it('keeps a restored open state open until a halfOpenAt beyond 2^31 − 1 ms, then half-opens', () => {
    const halfOpenAt = Date.now() + 3e9;
    // A rolling window over 2^31 − 1 ms too, so its rotation interval is a long one.
    const restored = breaker(
      { rollingWindowMs: 1e10, rollingBuckets: 1 },
      {
        initialState: {
          version: 1,
          state: { kind: 'open', trips: 1, openedAt: Date.now(), halfOpenAt },
          lastFailureAt: Date.now(),
        },
      },
    );
    vi.advanceTimersByTime(2 ** 31);
    expect(restored.state.kind).toBe('open');
    vi.advanceTimersByTime(halfOpenAt - Date.now() - 1);
    expect(restored.state.kind).toBe('open');
    vi.advanceTimersByTime(1);
    expect(restored.state.kind).toBe('half-open');
  });

  it('rejects a malformed saved state with INVALID_ARGUMENT', () => {
    expect(() => breaker({}, { initialState: { version: 1, state: { kind: 'ajar' } } as never })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });

  it('moves to half-open early when the active probe says ready', async () => {
    let ready = false;
    const probe = vi.fn(async () => ready);
    const target = breaker({ openMs: 60_000, probeIntervalMs: 100 }, { probe });
    await fail(target, 2);
    await vi.advanceTimersByTimeAsync(250);
    expect(probe).toHaveBeenCalledTimes(2);
    expect(target.state.kind).toBe('open');
    ready = true;
    await vi.advanceTimersByTimeAsync(100);
    expect(target.state.kind).toBe('half-open');
    await vi.advanceTimersByTimeAsync(1000);
    expect(probe).toHaveBeenCalledTimes(3); // probing stops once no longer open
  });

  it('aborts only the call that timed out, through its own child signal', async () => {
    const target = breaker({ volumeThreshold: 10 });
    const signals: AbortSignal[] = [];
    const hang = (signal: AbortSignal) =>
      new Promise<string>((resolve, reject) => {
        signals.push(signal);
        signal.addEventListener('abort', () => reject(signal.reason));
        setTimeout(() => resolve('late'), 500);
      });
    const slow = target.execute(hang, { timeoutMs: 100 });
    const patient = target.execute(hang, { timeoutMs: 1000 });
    const slowResult = expect(slow).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded });
    await vi.advanceTimersByTimeAsync(100);
    await slowResult;
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[1]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(400);
    await expect(patient).resolves.toBe('late');
  });

  it('execute fails fast with BREAKER_OPEN and the time to half-open', async () => {
    const target = breaker();
    await fail(target, 2);
    vi.advanceTimersByTime(250);
    const error = await target.execute(async () => 'never').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfergateError);
    expect(error).toMatchObject({ code: ErrorCode.BreakerOpen, retryable: true, retryAfterMs: 750 });
  });
});
