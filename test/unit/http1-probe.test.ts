// The HTTP/1 probe behind FAILED_PRECONDITION "answers HTTP/1, not gRPC": it must never hold a failed
// call longer than the caller allows. A blackholed host (accepts, never answers) is the worst case.
import { createServer, type Server } from 'node:http';
import { ErrorCode, InfergateError } from '@infergate/core';
import { createFaultProxy, type FaultProxy } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answersHttp1, explainFailedConnect } from '../../packages/core/src/internal/http1-probe.js';
import { parseEndpoint } from '../../packages/core/src/options.js';

let http1: Server;
let http1Port: number;
let proxy: FaultProxy;

beforeAll(async () => {
  http1 = createServer((_request, response) => response.end('not gRPC'));
  await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve));
  http1Port = (http1.address() as { port: number }).port;
  // In front of the HTTP/1 server: once blackholed, it accepts and never answers.
  proxy = await createFaultProxy({ target: `127.0.0.1:${http1Port}` });
  await proxy.set({ kind: 'blackhole' });
});

afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => http1.close(resolve));
});

const failedConnect = () =>
  new InfergateError(
    ErrorCode.Unavailable,
    'No connection established. Last error: Failed to connect (connection closed)',
  );

/** Tracks whether `promise` has settled yet. */
function watch<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  return { settled: () => settled, promise: tracked };
}

describe('HTTP/1 probe', () => {
  it('recognises an HTTP/1 port: FAILED_PRECONDITION, not retryable', async () => {
    const explained = await explainFailedConnect(failedConnect(), [parseEndpoint(`127.0.0.1:${http1Port}`)]);
    expect(explained).toMatchObject({ code: ErrorCode.FailedPrecondition, retryable: false });
  });

  it('on a blackholed host, stops as soon as the caller’s signal aborts: the error stands as it was', async () => {
    // Frozen timers: the probe's own bound cannot end it, only the signal can.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const controller = new AbortController();
      const error = failedConnect();
      const accepted = proxy.accepted;
      const probe = watch(explainFailedConnect(error, [parseEndpoint(proxy.url)], controller.signal));
      // The probe reached the host, which stays silent.
      await expect.poll(() => proxy.accepted, { timeout: 10_000 }).toBeGreaterThan(accepted);
      expect(probe.settled()).toBe(false);
      controller.abort();
      expect(await probe.promise).toBe(error);
    } finally {
      vi.useRealTimers();
    }
  });

  it('on a blackholed host, ends at its own bound without a signal: false', async () => {
    await expect(answersHttp1(parseEndpoint(proxy.url), { timeoutMs: 20 })).resolves.toBe(false);
  });

  it('never connects for a caller whose signal already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const accepted = proxy.accepted;
    await expect(answersHttp1(parseEndpoint(proxy.url), { signal: controller.signal })).resolves.toBe(false);
    expect(proxy.accepted).toBe(accepted);
  });
});
