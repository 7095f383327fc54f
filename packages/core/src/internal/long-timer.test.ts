import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearLongTimer, LongTimeout, MAX_TIMER_MS, setLongInterval, setLongTimeout } from './long-timer.js';

const DAY_MS = 24 * 3600 * 1000;

describe('setLongTimeout', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is Node's own timer for a delay setTimeout honours", () => {
    const fired = vi.fn();
    const timer = setLongTimeout(fired, MAX_TIMER_MS, 'x');
    expect(timer).not.toBeInstanceOf(LongTimeout);
    vi.advanceTimersByTime(MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledWith('x');
  });

  it('fires a delay longer than 2^31 − 1 ms when it is due, across the re-arms, not before', () => {
    const fired = vi.fn();
    const ms = 3e9;
    const timer = setLongTimeout(fired, ms, 'arg');
    expect(timer).toBeInstanceOf(LongTimeout);
    vi.advanceTimersByTime(1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    expect((timer as LongTimeout).armed).toBe(true);
    vi.advanceTimersByTime(ms - MAX_TIMER_MS - 2);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(fired).toHaveBeenCalledWith('arg');
    expect((timer as LongTimeout).armed).toBe(false);
    vi.advanceTimersByTime(10 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('fires a delay of several steps (a year) exactly when it is due', () => {
    const fired = vi.fn();
    const ms = 365 * DAY_MS;
    setLongTimeout(fired, ms);
    vi.advanceTimersByTime(ms - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('arms nothing for Infinity', () => {
    const fired = vi.fn();
    expect(setLongTimeout(fired, Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops in any step when cleared', () => {
    const fired = vi.fn();
    const timer = setLongTimeout(fired, 5e9);
    vi.advanceTimersByTime(MAX_TIMER_MS + 10);
    clearLongTimer(timer);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5e9);
    expect(fired).not.toHaveBeenCalled();
    clearLongTimer(undefined);
  });

  it('keeps unref across the re-arms', () => {
    const timer = setLongTimeout(() => {}, 3e9) as LongTimeout;
    expect(timer.unref()).toBe(timer);
    expect(timer.hasRef()).toBe(false);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(timer.armed).toBe(true);
    expect(timer.hasRef()).toBe(false);
    timer.ref();
    expect(timer.hasRef()).toBe(true);
    clearLongTimer(timer);
  });
});

describe('setLongTimeout with real timers', () => {
  it('keeps an unref’d step from holding the event loop, and prints no TimeoutOverflowWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const fired = vi.fn();
      const timer = setLongTimeout(fired, 3e9) as LongTimeout;
      timer.unref();
      const interval = setLongInterval(fired, 4e9);
      clearLongTimer(timer);
      clearLongTimer(interval);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'TimeoutOverflowWarning')).toEqual([]);
      expect(fired).not.toHaveBeenCalled();
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('setLongInterval', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('repeats a period longer than 2^31 − 1 ms at each period, not every millisecond', () => {
    const fired = vi.fn();
    const timer = setLongInterval(fired, 3e9);
    vi.advanceTimersByTime(3e9 - 1);
    expect(fired).toHaveBeenCalledTimes(0);
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(3e9 - 1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(2);
    clearLongTimer(timer);
    vi.advanceTimersByTime(6e9);
    expect(fired).toHaveBeenCalledTimes(2);
  });

  it('stops when its callback clears it', () => {
    let timer: ReturnType<typeof setLongInterval>;
    const fired = vi.fn(() => clearLongTimer(timer));
    timer = setLongInterval(fired, 3e9);
    vi.advanceTimersByTime(9e9);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('is a plain interval up to 2^31 − 1 ms and nothing for Infinity', () => {
    const fired = vi.fn();
    const timer = setLongInterval(fired, 1000);
    expect(timer).not.toBeInstanceOf(LongTimeout);
    vi.advanceTimersByTime(3000);
    expect(fired).toHaveBeenCalledTimes(3);
    clearLongTimer(timer);
    expect(setLongInterval(fired, Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});
