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
  it('infers on the default engine without the protobuf runtime or grpc-js, and loads them for the first other call', async () => {
    const { steps: loaded, output } = await steps('infer');
    // The import itself: none of the heavy modules (they were most of core's import time).
    expect(loaded.imported).toEqual([]);
    // The http2 engine writes and reads ModelInfer by hand: its first answer needs none of them.
    expect(output).toEqual([1, 2]);
    // Nor grpc-js: the http2 engine carries inference, and the TLS options are checked without it.
    // Nor the OpenTelemetry API, while no SDK is registered; nor zod, for valid client options
    // (decision 0025).
    for (const name of [...deferred, 'grpcJs', 'opentelemetryApi', 'zod'])
      expect(loaded.called).not.toContain(name);
    // A health call goes over grpc-js, with the generated descriptors: it loads them.
    expect(loaded.managed).toEqual(expect.arrayContaining([...deferred, 'grpcJs']));
  });

  it('answers requests made on a stream session before that code loaded', async () => {
    const { steps: loaded, output } = await steps('stream');
    expect(loaded.imported).toEqual([]);
    // Stream sessions decode with the protobuf runtime: their first answers need it.
    expect(loaded.called).toEqual(expect.arrayContaining(deferred));
    expect(output).toEqual([1, 2]);
  });
});
