import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCallScope, NO_SCOPE, raceSignal, sleep } from './call-scope.js';
import { ErrorCode, InfergateError } from './errors.js';

describe('createCallScope', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shares one empty scope when there is neither a signal nor a deadline', () => {
    expect(createCallScope()).toBe(NO_SCOPE);
  });

  it('aborts with DEADLINE_EXCEEDED when its deadline passes and says it timed out', () => {
    const scope = createCallScope({ timeoutMs: 100, what: 'the attempt' });
    expect(scope.remainingMs()).toBe(100);
    vi.advanceTimersByTime(100);
    expect(scope.signal?.aborted).toBe(true);
    expect(scope.timedOut()).toBe(true);
    const reason = scope.signal?.reason as InfergateError;
    expect(reason.code).toBe(ErrorCode.DeadlineExceeded);
    expect(reason.message).toContain('the attempt timed out after 100 ms');
  });

  it("follows the parent's abort as CANCELLED without counting it as its own timeout", () => {
    const parent = new AbortController();
    const scope = createCallScope({ signal: parent.signal, timeoutMs: 1000 });
    parent.abort();
    expect(scope.signal?.reason).toMatchObject({ code: ErrorCode.Cancelled });
    expect(scope.timedOut()).toBe(false);
  });

  it('aborting the scope leaves the parent untouched', () => {
    const parent = new AbortController();
    const scope = createCallScope({ signal: parent.signal, own: true });
    scope.abort();
    expect(scope.signal?.aborted).toBe(true);
    expect(parent.signal.aborted).toBe(false);
  });

  it('race rejects at the deadline even when the work never settles', async () => {
    const scope = createCallScope({ timeoutMs: 50 });
    const raced = scope.race(new Promise<never>(() => {}));
    const assertion = expect(raced).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded });
    vi.advanceTimersByTime(50);
    await assertion;
  });

  it('race passes the work through when it settles first', async () => {
    const scope = createCallScope({ timeoutMs: 50 });
    await expect(scope.race(Promise.resolve(7))).resolves.toBe(7);
    scope.dispose();
    vi.advanceTimersByTime(100);
    expect(scope.signal?.aborted).toBe(false);
  });

  it('aborts a deadline beyond 2^31 − 1 ms when it is due, not after 1 ms', () => {
    const scope = createCallScope({ timeoutMs: 3e9 });
    expect(scope.deadline).toBe(Date.now() + 3e9);
    vi.advanceTimersByTime(2 ** 31);
    expect(scope.signal?.aborted).toBe(false);
    vi.advanceTimersByTime(3e9 - 2 ** 31 - 1);
    expect(scope.signal?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(scope.timedOut()).toBe(true);
    expect(scope.signal?.reason).toMatchObject({ code: ErrorCode.DeadlineExceeded });
  });

  it('takes timeoutMs Infinity as no deadline: no timer, a pass-through scope', () => {
    expect(createCallScope({ timeoutMs: Number.POSITIVE_INFINITY })).toBe(NO_SCOPE);
    const parent = new AbortController();
    const scope = createCallScope({ signal: parent.signal, timeoutMs: Number.POSITIVE_INFINITY, own: true });
    expect(scope.deadline).toBeUndefined();
    expect(scope.remainingMs()).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
    parent.abort();
    expect(scope.signal?.reason).toMatchObject({ code: ErrorCode.Cancelled });
    expect(scope.timedOut()).toBe(false);
  });

  it('refuses a timeout that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => createCallScope({ timeoutMs: bad })).toThrow(InfergateError);
    }
  });
});

describe('sleep', () => {
  it('rejects with the typed reason when the signal aborts', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  });

  it('waits a delay beyond 2^31 − 1 ms to its end, and Infinity until the abort', async () => {
    vi.useFakeTimers();
    try {
      const done = vi.fn();
      const waiting = sleep(3e9).then(done);
      await vi.advanceTimersByTimeAsync(3e9 - 1);
      expect(done).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
      expect(done).toHaveBeenCalledOnce();
      const controller = new AbortController();
      const forever = sleep(Number.POSITIVE_INFINITY, controller.signal);
      expect(vi.getTimerCount()).toBe(0);
      controller.abort();
      await expect(forever).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    } finally {
      vi.useRealTimers();
    }
  });

  it('resolves after the delay', async () => {
    vi.useFakeTimers();
    try {
      const done = vi.fn();
      const waiting = sleep(20).then(done);
      await vi.advanceTimersByTimeAsync(20);
      await waiting;
      expect(done).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('raceSignal', () => {
  it('returns the work itself without a signal, and its value while the signal holds', async () => {
    const work = Promise.resolve(7);
    expect(raceSignal(work, undefined)).toBe(work);
    expect(await raceSignal(Promise.resolve(8), new AbortController().signal)).toBe(8);
  });

  it('rejects with the typed reason at the abort, without waiting for the work', async () => {
    const controller = new AbortController();
    const raced = raceSignal(new Promise<number>(() => {}), controller.signal);
    controller.abort();
    await expect(raced).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  });

  it('hands a success that came after the abort to onLateSuccess, and drops a late failure', async () => {
    const controller = new AbortController();
    let finish: (value: string) => void = () => {};
    const undone: string[] = [];
    const raced = raceSignal(
      new Promise<string>((resolve) => {
        finish = resolve;
      }),
      controller.signal,
      (value) => undone.push(value),
    );
    controller.abort();
    await expect(raced).rejects.toBeInstanceOf(InfergateError);
    finish('reservation-1');
    await expect.poll(() => undone).toEqual(['reservation-1']);
    // An already-aborted signal: nothing is awaited, and a late failure is not unhandled.
    const late = raceSignal(Promise.reject(new Error('late')), controller.signal);
    await expect(late).rejects.toMatchObject({ code: ErrorCode.Cancelled });
  });
});
