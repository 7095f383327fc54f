/** Latency percentiles of one measurement, in milliseconds. */
export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank percentile of an ascending array (perf_analyzer reports nearest-rank too). */
export function percentileOf(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

/** Sorts a copy of `latencies` (ms) and reads the percentiles from it. */
export function summarizeLatencies(latencies: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    meanMs: sorted.length === 0 ? Number.NaN : total / sorted.length,
    p50Ms: percentileOf(sorted, 50),
    p90Ms: percentileOf(sorted, 90),
    p95Ms: percentileOf(sorted, 95),
    p99Ms: percentileOf(sorted, 99),
    maxMs: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}
