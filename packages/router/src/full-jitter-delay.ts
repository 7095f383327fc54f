/**
 * Exponential backoff with full jitter (AWS architecture blog): a uniform delay in
 * [0, min(maxMs, baseMs · 2^retry)). `retry` counts from 0.
 */
export function fullJitterDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry);
  return random() * ceiling;
}
