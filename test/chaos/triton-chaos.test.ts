import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTriton, type TritonHandle } from '../interop/triton-harness.js';

// Scenarios 1 and 2 of test/chaos/README.md against two real Tritons of their own (not the shared
// one: one of them dies). Each scenario runs in a process of its own so the test can check that it
// exits by itself after close().
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(root, 'test', 'chaos', 'scenarios', 'triton-scenario.ts');
let tritons: TritonHandle[] = [];

async function scenario(name: string, a: TritonHandle, b: TritonHandle): Promise<Record<string, unknown>> {
  const run = await runScript(script, {
    cwd: root,
    args: [name, a.grpcAddress, b.grpcAddress, String(a.pid)],
    killAfterMs: 120_000,
  });
  expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-2000) }).toEqual({
    code: 0,
    stderr: '',
  });
  const line = run.stdout.split('\n').find((text) => text.startsWith('RESULT '));
  expect(line).toBeDefined();
  const result = JSON.parse((line as string).slice('RESULT '.length)) as Record<string, unknown>;
  expect(result.unhandled).toEqual([]);
  return result;
}

const start = () => startTriton({ models: ['identity_fp32_batched'], restrictedEndpoints: [] });

beforeAll(async () => {
  tritons = await Promise.all([start(), start(), start()]);
});

afterAll(async () => {
  await Promise.all(tritons.map((triton) => triton.stop()));
});

describe('chaos against real Triton', () => {
  it('kill -9 of one of two Tritons under load, batchers under the router: no call fails', async () => {
    const [a, b] = tritons as [TritonHandle, TritonHandle];
    const result = await scenario('kill', a, b);
    expect(result).toMatchObject({ calls: 1_000, tally: { ok: 1_000 }, late: 0, untyped: 0, notOwnRow: 0 });
    // Nothing ran twice on the survivor: it executed exactly the rows of the calls it answered.
    expect(result.bRan).toBe(result.answeredByB);
    expect(result.answeredByB).toBeGreaterThan(0);
  });

  it('a blackhole longer than the deadline in front of one Triton: every call falls back in time', async () => {
    const [, b, c] = tritons as [TritonHandle, TritonHandle, TritonHandle];
    const result = await scenario('blackhole', c, b);
    expect(result).toMatchObject({
      calls: 100,
      tally: { ok: 100 },
      late: 0,
      untyped: 0,
      notOwnRow: 0,
      aRan: 0,
    });
    expect(['open', 'half-open']).toContain(result.aBreaker); // a left rotation
  });
});
