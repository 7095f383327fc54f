import { fileURLToPath } from 'node:url';
import {
  type FakeLlmServer,
  runScript,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('./serverless-exit-fixture.ts', import.meta.url));

/**
 * How long the fixture's process may take before it counts as one that does not exit by itself: a
 * bound for the failure only (runScript's default, 15 s, is within reach of a busy 2-core machine
 * loading the sources through tsx).
 */
const EXIT_BOUND_MS = 90_000;

let triton: TestServer;
let openai: FakeLlmServer;

beforeAll(async () => {
  triton = await startTestServer();
  openai = await startFakeOpenAI({ chunkDelayMs: 5 });
});

afterAll(async () => {
  await triton.stop();
  await openai.close();
});

describe('serverless handler process', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('exits by itself right after answering, without close()', async () => {
    const { code, stdout, stderr, killed } = await runScript(fixture, {
      cwd: root,
      env: { ...process.env, TRITON_URL: triton.url, OPENAI_BASE_URL: openai.url },
      killAfterMs: EXIT_BOUND_MS,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
    expect(result).toEqual({
      first: { coldStart: true, echoed: 'cold start', streamed: 'echo: cold start' },
      second: { coldStart: false, echoed: 'warm start', streamed: 'echo: warm start' },
      builds: 1,
    });
    // Nothing was closed, yet the process ended by itself: runScript did not have to kill it.
    expect(killed).toBe(false);
    expect(triton.stats('identity').requests).toBeGreaterThanOrEqual(2);
  });
});
