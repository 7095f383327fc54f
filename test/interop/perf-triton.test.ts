// `infergate perf` against the interop run's real Triton (started once by global-setup.ts): a short
// concurrency sweep on add_sub with random inputs from the model's metadata. Structure and counts
// only, never timings: the machine is shared.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printLogTailOnFailure, type SharedTritonInfo, sharedTriton } from './shared-triton.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'packages/cli/src/bin.ts');

let triton: SharedTritonInfo;
let scratch: string;

beforeAll(async () => {
  triton = sharedTriton();
  scratch = await mkdtemp(join(tmpdir(), 'infergate-perf-triton-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

printLogTailOnFailure();

interface Step {
  load: number;
  completed: number;
  errors: number;
  latency: { p50Ms: number; p99Ms: number };
  server?: { requests: number; computeInferUs: number };
}

describe('infergate perf on real Triton', () => {
  it('sweeps c1 and c2 on add_sub with server queue and compute times from Triton', async () => {
    const csv = join(scratch, 'perf.csv');
    const run = await runScript(bin, {
      cwd: root,
      args: [
        'perf',
        'add_sub',
        '--url',
        triton.grpcAddress,
        '--concurrency',
        '1:2',
        '--window-ms',
        '300',
        '--max-windows',
        '3',
        '--csv',
        csv,
        '--json',
      ],
      killAfterMs: 120_000,
    });
    expect(run.stderr).not.toContain('infergate:');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { steps: Step[] };
    expect(report.steps.map((step) => step.load)).toEqual([1, 2]);
    for (const step of report.steps) {
      expect(step.completed).toBeGreaterThan(0);
      expect(step.errors).toBe(0);
      expect(step.latency.p50Ms).toBeLessThanOrEqual(step.latency.p99Ms);
      // Triton's own statistics: every measured request, and a compute time it measured itself.
      expect(step.server?.requests).toBe(step.completed);
      expect(step.server?.computeInferUs).toBeGreaterThan(0);
    }
    expect((await readFile(csv, 'utf8')).trimEnd().split('\n')).toHaveLength(3);
  }, 180_000);

  it('with client batching at c8 and request-rate mode: Triton counts one request per client batch', async () => {
    const run = await runScript(bin, {
      cwd: root,
      args: [
        'perf',
        'add_sub',
        '--url',
        triton.grpcAddress,
        '--concurrency',
        '8',
        '--client-batching',
        '--window-ms',
        '300',
        '--max-windows',
        '3',
        '--json',
      ],
      killAfterMs: 120_000,
    });
    expect(run.stderr).not.toContain('infergate:');
    expect(run.code).toBe(0);
    const [step] = (
      JSON.parse(run.stdout) as { steps: (Step & { clientBatches?: { batches: number; rows: number } })[] }
    ).steps;
    expect(step?.errors).toBe(0);
    expect(step?.clientBatches?.rows).toBe(step?.completed);
    expect(step?.server?.requests).toBe(step?.clientBatches?.batches);

    const rate = await runScript(bin, {
      cwd: root,
      args: [
        'perf',
        'add_sub',
        '--url',
        triton.grpcAddress,
        '--request-rate',
        '50',
        '--distribution',
        'poisson',
        '--window-ms',
        '300',
        '--max-windows',
        '3',
        '--json',
      ],
      killAfterMs: 120_000,
    });
    expect(rate.code).toBe(0);
    const [rated] = (JSON.parse(rate.stdout) as { steps: (Step & { mode: string })[] }).steps;
    expect(rated?.mode).toBe('rate');
    expect(rated?.completed).toBeGreaterThan(0);
    expect(rated?.server?.requests).toBe(rated?.completed);
  }, 240_000);
});
