import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { binHarness } from '../../../../test/unit/bin-harness.js';
import { writeNpy } from '../npy.js';
import type { PerfReport } from './perf-report.js';

// `infergate perf` through the real bin against the reference server on 127.0.0.1. Short windows
// and few of them: the assertions are on structure and counts, never on timings.
const cli = binHarness();

function perf(...args: string[]) {
  return cli.run(['perf', ...args, '--url', cli.server.url, '--window-ms', '150', '--max-windows', '3'], {
    killAfterMs: 90_000,
  });
}

/** Every element closed in order: enough to catch a broken hand-written SVG. */
function expectWellFormedXml(text: string): void {
  const open: string[] = [];
  for (const match of text.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
    const [, closing, name = '', selfClosing] = match;
    if (selfClosing) continue;
    if (closing) expect(open.pop()).toBe(name);
    else open.push(name);
  }
  expect(open).toEqual([]);
  expect(text).not.toMatch(/NaN|undefined|Infinity/);
}

function expectOrdered(step: PerfReport['steps'][number]): void {
  const { p50Ms, p90Ms, p95Ms, p99Ms, maxMs } = step.latency;
  expect(p50Ms).toBeGreaterThan(0);
  expect(p50Ms).toBeLessThanOrEqual(p90Ms);
  expect(p90Ms).toBeLessThanOrEqual(p95Ms);
  expect(p95Ms).toBeLessThanOrEqual(p99Ms);
  expect(p99Ms).toBeLessThanOrEqual(maxMs);
}

describe('infergate perf', () => {
  it('a concurrency sweep writes CSV, JSON and SVG with one step per load and server times', async () => {
    const csv = join(cli.scratch, 'sweep.csv');
    const svg = join(cli.scratch, 'sweep.svg');
    const json = join(cli.scratch, 'sweep.json');
    const run = await perf(
      'identity',
      '--concurrency',
      '1:4:x2',
      '--csv',
      csv,
      '--svg',
      svg,
      '--json-file',
      json,
    );
    expect(run.stderr).not.toContain('infergate:');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^LOAD\s+INFER\/S\s+P50_MS/);
    expect(run.stdout).toMatch(/\nc4\s/);

    const report = JSON.parse(await readFile(json, 'utf8')) as PerfReport;
    expect(report.steps.map((step) => [step.mode, step.load])).toEqual([
      ['concurrency', 1],
      ['concurrency', 2],
      ['concurrency', 4],
    ]);
    for (const step of report.steps) {
      expect(step.completed).toBeGreaterThan(0);
      expect(step.errors).toBe(0);
      expect(step.latency.count).toBe(step.completed);
      expect(step.windows).toBe(3); // --max-windows 3, and stability needs 3
      expectOrdered(step);
      // The statistics RPC's deltas cover exactly the reported windows' requests.
      expect(step.server?.requests).toBe(step.completed);
      expect(step.server?.computeInferUs).toBeGreaterThan(0);
    }

    const lines = (await readFile(csv, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    const header = (lines[0] ?? '').split(',');
    expect(header.slice(0, 3)).toEqual(['mode', 'load', 'stable']);
    for (const line of lines.slice(1)) {
      const cells = line.split(',');
      expect(cells).toHaveLength(header.length);
      expect(Number(cells[header.indexOf('completed')])).toBeGreaterThan(0);
    }

    const chart = await readFile(svg, 'utf8');
    expect(chart.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expectWellFormedXml(chart);
    expect(chart.match(/<polyline /g)).toHaveLength(3);
    expect(chart).toContain('>c4<');
  }, 120_000);

  it('request-rate mode (Poisson) with inputs from a .npy file, client batching and --json', async () => {
    const npy = join(cli.scratch, 'in.npy');
    await writeFile(
      npy,
      writeNpy({ datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(0.5) }),
    );
    const run = await perf(
      'identity',
      '--request-rate',
      '40:80:40',
      '--distribution',
      'poisson',
      '--input',
      `INPUT0:::@${npy}`,
      '--client-batching',
      '--max-batch-size',
      '8',
      '--batch-policy',
      'fixed',
      '--max-queue-delay-ms',
      '2',
      '--json',
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as PerfReport;
    expect(report.clientBatching).toBe(true);
    expect(report.batcher).toEqual({
      flush: 'fixed',
      maxBatchSize: 8,
      maxQueueDelayMs: 2,
      maxInFlightBatches: 2,
    });
    expect(report.steps.map((step) => [step.mode, step.load])).toEqual([
      ['rate', 40],
      ['rate', 80],
    ]);
    for (const step of report.steps) {
      expect(step.completed).toBeGreaterThan(0);
      expect(step.errors).toBe(0);
      expectOrdered(step);
      // Every client batch is one request the server counted; every call is a row of one.
      expect(step.clientBatches?.rows).toBe(step.completed);
      expect(step.server?.requests).toBe(step.clientBatches?.batches);
      expect(step.clientBatches?.meanBatchSize).toBeLessThanOrEqual(8);
    }
  }, 120_000);

  it('batcher options without --client-batching, or a bad policy, exit 2', async () => {
    const alone = await perf('identity', '--max-batch-size', '8');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--max-batch-size needs --client-batching');
    const policy = await perf('identity', '--client-batching', '--batch-policy', 'eager');
    expect(policy.code).toBe(2);
    expect(policy.stderr).toContain('--batch-policy must be adaptive or fixed');
  }, 120_000);

  it('inputs from a JSON file, with shared memory allowed', async () => {
    const json = join(cli.scratch, 'in.json');
    await writeFile(json, JSON.stringify([[1, 2, 3, 4]]));
    const run = await perf(
      'identity',
      '--concurrency',
      '2',
      '--input',
      `INPUT0:FP32:1x4:@${json}`,
      '--shared-memory',
      '--json',
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as PerfReport;
    expect(report.sharedMemory).toBe(true);
    expect(report.steps).toHaveLength(1);
    expect(report.steps[0]?.completed).toBeGreaterThan(0);
    expect(report.steps[0]?.errors).toBe(0);
  }, 120_000);

  it('a wrong command line exits 2 and a missing model exits 1, each with a clear message', async () => {
    const both = await perf('identity', '--concurrency', '1', '--request-rate', '10');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('not both');
    const zero = await perf('identity', '--concurrency', '0:4');
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('START must be a positive integer');
    const missing = await perf('no_such_model');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^infergate: NOT_FOUND: /);
  }, 120_000);
});
