import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from '@infergate/testing';
import { describe, expect, it } from 'vitest';

// Each scenario runs in a process of its own (test/chaos/scenarios/reference-scenario.ts) against
// two reference servers in child processes of it, so a kill -9 is real and the test can check that
// the process exits by itself after close(). See test/chaos/README.md.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(root, 'test', 'chaos', 'scenarios', 'reference-scenario.ts');

async function scenario(name: string): Promise<Record<string, unknown>> {
  const run = await runScript(script, { cwd: root, args: [name], killAfterMs: 90_000 });
  const line = run.stdout.split('\n').find((text) => text.startsWith('RESULT '));
  // Exit code 0: it ended by itself (a leftover handle would keep it until the kill, code null),
  // with no unhandled rejection (Node exits 1 on one).
  expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-2000) }).toEqual({
    code: 0,
    stderr: '',
  });
  expect(line).toBeDefined();
  const result = JSON.parse((line as string).slice('RESULT '.length)) as Record<string, unknown>;
  expect(result.unhandled).toEqual([]);
  return result;
}

/** Every call settled in time, typed, each with its own row, and nothing ran twice unasked. */
const clean = { late: 0, untyped: 0, notOwnRow: 0, ranTwice: 0 };

describe('chaos against reference servers (child processes)', { timeout: 120_000 }, () => {
  it('kill -9 of one of two endpoints under load, batchers under the router: no call fails', async () => {
    const result = await scenario('kill');
    expect(result).toMatchObject({ ...clean, calls: 2_000, tally: { ok: 2_000 } });
    expect(result.ranOnA).toBeGreaterThanOrEqual(64); // a was serving when it died
  });

  it('a blackhole longer than the deadline: calls leave it for the fallback, or end at their deadline', async () => {
    const result = await scenario('blackhole');
    expect(result).toMatchObject({
      ...clean,
      calls: 200,
      tally: { ok: 200 },
      ranOnA: 0,
      alone: 'DEADLINE_EXCEEDED',
    });
    expect(['open', 'half-open']).toContain(result.aBreaker); // a left rotation
  });

  it('a reset mid-stream (decoupled) ends the stream with a typed error and the partial output', async () => {
    const result = await scenario('reset-stream');
    expect(result).toMatchObject({
      received: [0, 1, 2, 3, 4],
      errorCode: 'UNAVAILABLE',
      afterFirstChunk: true,
      partial: 5,
      settledInTime: true,
      after: 20,
    });
  });

  it('a slow endpoint: attempts past attemptTimeoutMs fall back and the endpoint leaves rotation', async () => {
    const result = await scenario('slow');
    expect(result).toMatchObject({ ...clean, calls: 100, tally: { ok: 100 } });
    expect(['open', 'half-open']).toContain(result.aBreaker); // a left rotation
  });

  it('a flapping endpoint (up and down every 200 ms): no call fails while the other is healthy', async () => {
    const result = await scenario('flapping');
    expect(result).toMatchObject(clean);
    expect(result.tally).toEqual({ ok: result.calls });
    expect(result.calls).toBeGreaterThan(0);
  });
});
