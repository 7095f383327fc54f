import type { Budget } from './budget.js';

const LENGTH_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000, month: 30 * 86_400_000 } as const;

/**
 * Where a window stands at `now`: the buckets whose sum is the spend that counts, the bucket a
 * settle adds to, when the keys may expire, and when the count next drops.
 */
export interface WindowSpan {
  /** Bucket starts (ms) to sum, oldest first; calendar windows have one. */
  buckets: number[];
  /** The bucket new spend goes into (the last of `buckets`). */
  current: number;
  /** Start of the counted span (ms). */
  start: number;
  /** When the count next drops: the calendar reset, or the oldest rolling bucket leaving. */
  resetAt: number;
  /** When a bucket started now may be deleted (its last day of use plus a margin). */
  expireAt: number;
}

function calendarStart(window: Budget['window'], now: number): { start: number; end: number } {
  if (window === 'month') {
    const date = new Date(now);
    const year = date.getUTCFullYear();
    const month = date.getUTCMonth();
    return { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
  }
  const length = LENGTH_MS[window];
  const start = Math.floor(now / length) * length;
  return { start, end: start + length };
}

/**
 * The window of a budget at `now` (UTC). Rolling windows use `rollingBuckets` fixed sub-buckets of
 * length L/N and count the current bucket plus the N before it, so the counted span is between L
 * and L + L/N long: never less than the window (no spend escapes), at most one bucket more.
 */
export function windowAt(
  budget: Pick<Budget, 'window' | 'kind' | 'rollingBuckets'>,
  now: number,
): WindowSpan {
  if (budget.kind === 'calendar') {
    const { start, end } = calendarStart(budget.window, now);
    return { buckets: [start], current: start, start, resetAt: end, expireAt: end + (end - start) };
  }
  const bucketMs = Math.ceil(LENGTH_MS[budget.window] / budget.rollingBuckets);
  const current = Math.floor(now / bucketMs) * bucketMs;
  const buckets: number[] = [];
  for (let i = budget.rollingBuckets; i >= 0; i--) buckets.push(current - i * bucketMs);
  const start = buckets[0] as number;
  return {
    buckets,
    current,
    start,
    resetAt: current + bucketMs,
    expireAt: current + (budget.rollingBuckets + 2) * bucketMs,
  };
}
