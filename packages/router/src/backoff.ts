import { abortError } from '@infergate/core';

/**
 * Exponential backoff with full jitter (AWS architecture blog): a uniform delay in
 * [0, min(maxMs, baseMs · 2^retry)). `retry` counts from 0.
 */
export function fullJitterDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry);
  return random() * ceiling;
}

/** Waits `ms`, or rejects with the signal's typed reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      if (signal !== undefined) reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
