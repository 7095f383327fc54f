import { fileURLToPath } from 'node:url';
import { runScript, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('./core-import-deferral-fixture.ts', import.meta.url));
/** A bound for the failure only: tsx loading the sources on a busy 2-core machine. */
const EXIT_BOUND_MS = 90_000;

let triton: TestServer;

beforeAll(async () => {
  triton = await startTestServer();
});

afterAll(async () => {
  await triton.stop();
});

async function steps(mode: 'infer' | 'stream') {
  const { code, stdout, stderr } = await runScript(fixture, {
    cwd: root,
    args: [mode],
    env: { ...process.env, TRITON_URL: triton.url },
    killAfterMs: EXIT_BOUND_MS,
  });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
}

const deferred = ['protobufRuntime', 'generatedDescriptors', 'grpcWire'];

describe('importing @infergate/core', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('loads the protobuf runtime and the generated descriptors for the first client, not at import', async () => {
    const { steps: loaded, output } = await steps('infer');
    // The import itself: none of the heavy modules (they were most of core's import time).
    expect(loaded.imported).toEqual([]);
    // A client starts loading them in the background; by the answer to its first call they are in.
    expect(loaded.called).toEqual(expect.arrayContaining(deferred));
    expect(output).toEqual([1, 2]);
  });

  it('answers requests made on a stream session before that code loaded', async () => {
    const { steps: loaded, output } = await steps('stream');
    expect(loaded.imported).toEqual([]);
    expect(loaded.called).toEqual(expect.arrayContaining(deferred));
    expect(output).toEqual([1, 2]);
  });
});
