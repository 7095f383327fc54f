import { InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { percentileOf, summarizeLatencies } from './latency-summary.js';
import { parseLoadRange } from './load-range.js';
import { rateWindow, type WindowSample } from './load-window.js';
import { isStable } from './stable-measurement.js';

function sample(completed: number, latencyMs: number): WindowSample {
  return {
    latencies: Array.from({ length: completed }, () => latencyMs),
    completed,
    errors: 0,
    skipped: 0,
    elapsedMs: 1000,
    cpuMs: 1,
  };
}

describe('perf arithmetic', () => {
  it('load ranges: multiplied, added, single, and bad ones as usage errors', () => {
    expect(parseLoadRange('1:64:x2', 'concurrency', true)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    expect(parseLoadRange('1:16:4', 'concurrency', true)).toEqual([1, 5, 9, 13]);
    expect(parseLoadRange('8', 'concurrency', true)).toEqual([8]);
    expect(parseLoadRange('50:150:50', 'request-rate', false)).toEqual([50, 100, 150]);
    expect(parseLoadRange('0.5', 'request-rate', false)).toEqual([0.5]);
    for (const bad of ['0', '4:1', '1:4:x1', '1:2:3:4', 'a', '1:100000:1', '1.5']) {
      expect(() => parseLoadRange(bad, 'concurrency', true)).toThrow(InfergateError);
    }
  });

  it('percentiles by nearest rank, ordered', () => {
    const values = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentileOf(Float64Array.from(values).sort(), 99)).toBe(99);
    const summary = summarizeLatencies(values);
    expect([summary.p50Ms, summary.p90Ms, summary.p95Ms, summary.p99Ms, summary.maxMs]).toEqual([
      50, 90, 95, 99, 100,
    ]);
    expect(summarizeLatencies([]).count).toBe(0);
  });

  it('stability: the last N windows within the tolerance on throughput and latency', () => {
    const options = { stableWindows: 3, tolerance: 0.1, maxWindows: 10 };
    expect(isStable([sample(100, 1), sample(105, 1), sample(98, 1)], options)).toBe(true);
    expect(isStable([sample(100, 1), sample(105, 1)], options)).toBe(false);
    expect(isStable([sample(100, 1), sample(150, 1), sample(98, 1)], options)).toBe(false);
    expect(isStable([sample(100, 1), sample(100, 2), sample(100, 1)], options)).toBe(false);
    expect(isStable([sample(10, 1), sample(100, 1), sample(100, 1), sample(100, 1)], options)).toBe(true);
    expect(isStable([sample(0, 0), sample(0, 0), sample(0, 0)], options)).toBe(false);
  });

  it('rate mode: at most maxOutstanding calls wait, sends beyond are skipped and counted', async () => {
    // Each call outlasts the 50 ms window, so no answer frees a slot while sends are due.
    const call = () => new Promise<void>((resolve) => setTimeout(resolve, 1500));
    const sample = await rateWindow(call, 1000, 'constant', 50, 5);
    expect(sample.completed).toBe(5);
    expect(sample.errors).toBe(0);
    expect(sample.skipped).toBeGreaterThan(0);
    expect(sample.latencies).toHaveLength(5);
    const failing = await rateWindow(() => Promise.reject(new Error('boom')), 200, 'poisson', 30, 100);
    expect(failing.completed).toBe(0);
    expect(failing.errors).toBeGreaterThan(0);
    expect(failing.firstError).toBe('boom');
  });
});
