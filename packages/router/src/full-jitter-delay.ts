/**
 * Exponential backoff with full jitter (AWS architecture blog): a uniform delay in
 * [0, min(maxMs, baseMs · 2^retry)). `retry` counts from 0.
 */
export function fullJitterDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry);
  return random() * ceiling;
}

/**
 * The wait before a retry pass: the full-jitter backoff, on top of `floorMs` when a target asked for
 * time (Retry-After, a cool-down) so that callers released at the same instant spread out, and
 * never over `maxMs` in all. `undefined` when the floor alone is past `maxMs`: not worth waiting.
 */
export function retryPassDelay(
  retry: number,
  baseMs: number,
  maxMs: number,
  floorMs: number,
  random: () => number,
): number | undefined {
  if (floorMs > maxMs) return undefined;
  const backoff = fullJitterDelay(retry, baseMs, maxMs, random);
  return floorMs > 0 ? Math.min(maxMs, floorMs + backoff) : backoff;
}
