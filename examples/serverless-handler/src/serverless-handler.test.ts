import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FakeLlmServer,
  runScript,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers } from './handlers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const entry = fileURLToPath(new URL('./index.ts', import.meta.url));

/**
 * How long the example's process may take before it counts as one that does not exit by itself:
 * a bound for the failure only. The process loads every package's sources through tsx (about 3 s
 * of CPU); on a busy 2-core machine that took more than runScript's default 15 s, the process was
 * killed mid-run and the test failed with exit code null.
 */
const EXIT_BOUND_MS = 90_000;

let primary: TestServer;
let secondary: TestServer;
let openai: FakeLlmServer;
let directory: string;

beforeAll(async () => {
  [primary, secondary, openai] = await Promise.all([startTestServer(), startTestServer(), startFakeOpenAI()]);
  directory = await mkdtemp(join(tmpdir(), 'infergate-serverless-'));
});

afterAll(async () => {
  await Promise.all([primary.stop(), secondary.stop(), openai.close()]);
  await rm(directory, { recursive: true, force: true });
});

describe('serverless-handler example', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('runs cold + warm invocations of both handlers on one gateway, then the process exits by itself', async () => {
    const { code, stdout, stderr, killed } = await runScript(entry, {
      cwd: root,
      env: {
        ...process.env,
        TRITON_URLS: `${primary.url},${secondary.url}`,
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: 'sk-test',
      },
      killAfterMs: EXIT_BOUND_MS,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'lambda {"echoed":"cold start","reply":"echo: cold start","coldStart":true}',
      'lambda {"echoed":"warm start","reply":"echo: warm start","coldStart":false}',
      'fetch 200 {"echoed":"fetch one","reply":"echo: fetch one","coldStart":false}',
      'fetch 200 {"echoed":"fetch two","reply":"echo: fetch two","coldStart":false}',
      'builds 1',
    ]);
    // The router, batcher, gRPC channels and HTTP keep-alive sockets were never closed, yet the
    // process ended by itself: runScript did not have to kill it.
    expect(killed).toBe(false);
  });

  it('a cold start restores the breaker state the previous instance saved', async () => {
    const stateFile = join(directory, 'router-state.json');
    const env = {
      TRITON_URLS: `${primary.url},${secondary.url}`,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'sk-test',
      ROUTER_STATE_FILE: stateFile,
    };
    primary.faults.set('identity', { code: 'UNAVAILABLE', message: 'replica is down', times: 1000 });
    try {
      // Instance 1: the primary fails; every call falls back to the secondary until the breaker trips.
      const first = createHandlers(env);
      for (let index = 0; index < 6; index++) {
        const result = await first.lambda({ text: `call ${index}` }, {});
        expect(result.echoed).toBe(`call ${index}`);
      }
      expect(first.gateway.current?.router.breakerStates().primary?.kind).toBe('open');
      const saved = JSON.parse(await readFile(stateFile, 'utf8'));
      expect(saved.primary.state.kind).toBe('open');

      // Instance 2 (a new process in production): the breaker starts open, the primary is not tried.
      const triedBefore = primary.faults.applied('identity');
      const second = createHandlers(env);
      const response = await second.fetch(
        new Request('http://function.local/', { method: 'POST', body: JSON.stringify({ text: 'restored' }) }),
      );
      expect(await response.json()).toMatchObject({ echoed: 'restored', coldStart: true });
      expect(second.gateway.current?.router.breakerStates().primary?.kind).toBe('open');
      expect(primary.faults.applied('identity')).toBe(triedBefore);
    } finally {
      primary.faults.clear();
    }
  });
});
