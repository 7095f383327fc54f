import { sleep } from '@infergate/core';
import { type LatencySummary, summarizeLatencies } from './latency-summary.js';
import type { WindowSample } from './load-window.js';

/** The server's cumulative counters for one model (from the statistics RPC). */
export interface ServerCounters {
  requests: number;
  queueNs: bigint;
  computeInputNs: bigint;
  computeInferNs: bigint;
  computeOutputNs: bigint;
}

/** Mean server-side times per request over the measured windows, µs. */
export interface ServerTimes {
  requests: number;
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
}

/** The client-side batcher's cumulative counters (`--client-batching`). */
export interface BatchCounters {
  batches: number;
  rows: number;
}

/** What the client-side batcher sent over the measured windows. */
export interface ClientBatches {
  /** Batch RPCs sent (each is one request to the server). */
  batches: number;
  /** Rows in them. */
  rows: number;
  meanBatchSize: number;
}

export interface StabilityOptions {
  /** Consecutive windows that must agree. */
  stableWindows: number;
  /** How far (fraction) each window's throughput and mean latency may be from those windows' mean. */
  tolerance: number;
  /** Give up after this many windows and report the last `stableWindows` as unstable. */
  maxWindows: number;
}

export interface MeasuredStep {
  /** Whether the last `stableWindows` windows agreed within the tolerance. */
  stable: boolean;
  windows: number;
  completed: number;
  errors: number;
  skipped: number;
  throughput: number;
  latency: LatencySummary;
  clientCpuMsPerCall: number;
  server?: ServerTimes;
  clientBatches?: ClientBatches;
  firstError?: string;
}

function throughputOf(sample: WindowSample): number {
  return sample.elapsedMs > 0 ? (sample.completed * 1000) / sample.elapsedMs : 0;
}

function meanLatency(sample: WindowSample): number {
  let total = 0;
  for (const value of sample.latencies) total += value;
  return sample.latencies.length === 0 ? 0 : total / sample.latencies.length;
}

function within(values: readonly number[], tolerance: number): boolean {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  if (mean === 0) return values.every((value) => value === 0);
  return values.every((value) => Math.abs(value - mean) <= tolerance * mean);
}

/** perf_analyzer's rule: the last N windows' throughput and latency all lie within ±tolerance of their mean. */
export function isStable(samples: readonly WindowSample[], options: StabilityOptions): boolean {
  if (samples.length < options.stableWindows) return false;
  const last = samples.slice(-options.stableWindows);
  if (last.some((sample) => sample.completed === 0)) return false;
  return (
    within(last.map(throughputOf), options.tolerance) && within(last.map(meanLatency), options.tolerance)
  );
}

function serverTimes(before: ServerCounters, after: ServerCounters): ServerTimes {
  const requests = after.requests - before.requests;
  const perRequestUs = (ns: bigint) => (requests > 0 ? Number(ns) / 1000 / requests : 0);
  return {
    requests,
    queueUs: perRequestUs(after.queueNs - before.queueNs),
    computeInputUs: perRequestUs(after.computeInputNs - before.computeInputNs),
    computeInferUs: perRequestUs(after.computeInferNs - before.computeInferNs),
    computeOutputUs: perRequestUs(after.computeOutputNs - before.computeOutputNs),
  };
}

/**
 * Reads the server's counters until two reads 10 ms apart agree on the request count (at most 5
 * times): Triton counts a request after sending its response, so a read made the moment the last
 * response arrived can miss it, and the step would be off by one.
 */
async function settledCounters(read: () => Promise<ServerCounters>): Promise<ServerCounters> {
  let last = await read();
  for (let attempt = 0; attempt < 5; attempt++) {
    await sleep(10);
    const next = await read();
    if (next.requests === last.requests) return next;
    last = next;
  }
  return last;
}

function clientBatches(before: BatchCounters, after: BatchCounters): ClientBatches {
  const batches = after.batches - before.batches;
  const rows = after.rows - before.rows;
  return { batches, rows, meanBatchSize: batches > 0 ? rows / batches : 0 };
}

/**
 * Runs `window` until the last `stableWindows` agree (or `maxWindows` ran) and reports those last
 * windows together. `counters` (the server's) and `batchCounters` (the client batcher's), when
 * given, are read before each window and after the last, so they cover exactly the reported windows.
 */
export async function measureUntilStable(
  window: () => Promise<WindowSample>,
  options: StabilityOptions,
  counters?: () => Promise<ServerCounters>,
  signal?: AbortSignal,
  batchCounters?: () => BatchCounters,
): Promise<MeasuredStep> {
  const samples: WindowSample[] = [];
  const snapshots: ServerCounters[] = [];
  const batchSnapshots: BatchCounters[] = [];
  while (samples.length < options.maxWindows && !signal?.aborted) {
    if (counters) snapshots.push(await settledCounters(counters));
    if (batchCounters) batchSnapshots.push(batchCounters());
    samples.push(await window());
    if (isStable(samples, options)) break;
  }
  if (counters) snapshots.push(await settledCounters(counters));
  if (batchCounters) batchSnapshots.push(batchCounters());
  const used = samples.slice(-options.stableWindows);
  const latencies = used.flatMap((sample) => sample.latencies);
  const completed = used.reduce((sum, sample) => sum + sample.completed, 0);
  const elapsedMs = used.reduce((sum, sample) => sum + sample.elapsedMs, 0);
  const cpuMs = used.reduce((sum, sample) => sum + sample.cpuMs, 0);
  const firstError = samples.find((sample) => sample.firstError !== undefined)?.firstError;
  const before = snapshots[snapshots.length - 1 - used.length];
  const after = snapshots[snapshots.length - 1];
  const batchesBefore = batchSnapshots[batchSnapshots.length - 1 - used.length];
  const batchesAfter = batchSnapshots[batchSnapshots.length - 1];
  return {
    stable: isStable(samples, options),
    windows: samples.length,
    completed,
    errors: used.reduce((sum, sample) => sum + sample.errors, 0),
    skipped: used.reduce((sum, sample) => sum + sample.skipped, 0),
    throughput: elapsedMs > 0 ? (completed * 1000) / elapsedMs : 0,
    latency: summarizeLatencies(latencies),
    clientCpuMsPerCall: completed > 0 ? cpuMs / completed : Number.NaN,
    ...(before && after ? { server: serverTimes(before, after) } : {}),
    ...(batchesBefore && batchesAfter ? { clientBatches: clientBatches(batchesBefore, batchesAfter) } : {}),
    ...(firstError !== undefined ? { firstError } : {}),
  };
}
