// Shared helpers for benchmark suites: machine facts, percentiles, and the result file format of
// docs/benchmarks.md (a ratio between arms measured side by side, absolute figures for context).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, type } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferRequest, InferTransport } from '@infergate/core';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(BENCH_DIR, '..');

export interface BenchCase {
  name: string;
  arm: string;
  load: string;
  itemsPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  extra?: Record<string, unknown>;
}

export interface BenchResult {
  suite: string;
  date: string;
  machine: { cpus: number; model: string; node: string; os: string };
  versions: Record<string, string>;
  cases: BenchCase[];
  ratios: Record<string, number>;
  targets: Record<string, string>;
  command: string;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/** The 1-minute load average (Linux /proc), as printed. */
export function loadAverage(): string | undefined {
  return readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

export function packageVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8'));
  return manifest.version;
}

export function machine(): BenchResult['machine'] {
  const cpuList = cpus();
  return {
    cpus: cpuList.length,
    model: cpuList[0]?.model ?? 'unknown',
    node: process.version,
    os: `${type()} ${release()}`,
  };
}

export function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Writes bench/results/<suite>.json and prints the cases and named ratios. */
export function report(result: Omit<BenchResult, 'date' | 'machine'>): BenchResult {
  const full: BenchResult = { ...result, date: new Date().toISOString(), machine: machine() };
  mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
  writeFileSync(join(BENCH_DIR, 'results', `${result.suite}.json`), `${JSON.stringify(full, null, 2)}\n`);
  console.log(`\n${result.suite}: ${full.machine.cpus} × ${full.machine.model}, Node ${full.machine.node}`);
  console.table(
    full.cases.map((entry) => ({
      case: entry.name,
      'items/s': entry.itemsPerSec === undefined ? '' : round(entry.itemsPerSec, 1),
      'p50 ms': entry.p50Ms === undefined ? '' : round(entry.p50Ms, 3),
      'p99 ms': entry.p99Ms === undefined ? '' : round(entry.p99Ms, 3),
    })),
  );
  for (const [key, value] of Object.entries(full.ratios)) {
    const target = full.targets[key] ?? 'report';
    console.log(`  ${key.padEnd(34)} ${String(round(value, 3)).padStart(10)}   target ${target}`);
  }
  console.log(`  written to bench/results/${result.suite}.json`);
  return full;
}

/** Reads `--name value` from the command line. */
export function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

/**
 * A closed-loop slice on `infergate perf`'s loop: throughput and the latencies of one transport's
 * calls. A benchmark arm must not fail quietly, so any failed call throws.
 */
export async function closedLoop(
  transport: InferTransport,
  request: InferRequest,
  concurrency: number,
  ms: number,
): Promise<{ perSec: number; latencies: number[] }> {
  const sample = await closedLoopWindow(() => transport.infer(request, {}), concurrency, ms);
  if (sample.errors > 0) throw new Error(`${sample.errors} calls failed: ${sample.firstError}`);
  return { perSec: sample.completed / (sample.elapsedMs / 1000), latencies: sample.latencies };
}

/**
 * `concurrency` callers each calling `call` in a closed loop for `ms`: calls completed, the wall time
 * they took and this process's user and system CPU over it (ms). For the profiling scripts that split
 * a client's CPU per call from a server's.
 */
export async function cpuTimedLoop(
  concurrency: number,
  ms: number,
  call: () => Promise<unknown>,
): Promise<{ calls: number; elapsedMs: number; userMs: number; systemMs: number }> {
  let calls = 0;
  const end = performance.now() + ms;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await call();
        calls++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    calls,
    elapsedMs: performance.now() - start,
    userMs: used.user / 1000,
    systemMs: used.system / 1000,
  };
}
