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

describe('importing @infergate/core', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('loads the protobuf runtime and the generated descriptors on the first call, not at import', async () => {
    const { code, stdout, stderr } = await runScript(fixture, {
      cwd: root,
      env: { ...process.env, TRITON_URL: triton.url },
      killAfterMs: EXIT_BOUND_MS,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const { steps, output } = JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
    // The import itself: none of the heavy modules (they were most of core's import time).
    expect(steps.imported).toEqual([]);
    // A client validates its options (zod) and opens its grpc-js channel object, nothing more.
    expect(steps.constructed).not.toContain('protobufRuntime');
    expect(steps.constructed).not.toContain('generatedDescriptors');
    expect(steps.constructed).not.toContain('grpcWire');
    // The first call loads what it needs, and works.
    expect(steps.called).toEqual(
      expect.arrayContaining(['protobufRuntime', 'generatedDescriptors', 'grpcWire']),
    );
    expect(output).toEqual([1, 2]);
  });
});
