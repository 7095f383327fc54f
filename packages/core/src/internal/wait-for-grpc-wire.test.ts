// A process's first calls wait for grpc-wire.ts (lazy-modules.ts). These hold that wait to the
// call's own deadline and abort signal, with a load that never ends or ends when the test says.
// No server: a call that got past the wait would fail with UNAVAILABLE, not the codes expected here.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTritonClient } from '../client.js';
import { ErrorCode, InfergateError } from '../errors.js';
import type * as GrpcWire from './grpc-wire.js';
import { replaceGrpcWireLoaderForTesting } from './lazy-modules.js';
import { waitForGrpcWire } from './wait-for-grpc-wire.js';

const NOWHERE = 'grpc://127.0.0.1:1';
const never = () => new Promise<typeof GrpcWire>(() => {});

function deferredLoad() {
  let finish: () => void = () => {};
  const loaded = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const load = () => loaded.then(() => import('./grpc-wire.js'));
  return { load, finish };
}

async function failure(call: Promise<unknown>): Promise<InfergateError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InfergateError);
  return error as InfergateError;
}

afterEach(() => {
  vi.useRealTimers();
  replaceGrpcWireLoaderForTesting(() => import('./grpc-wire.js'));
});

describe('a call made while the gRPC message code loads', () => {
  it('ends at its deadline when the load outlasts it', async () => {
    replaceGrpcWireLoaderForTesting(never);
    const client = createTritonClient({ url: NOWHERE, enableGpuIpc: false });
    const error = await failure(client.serverLive({ timeoutMs: 50 }));
    expect(error.code).toBe(ErrorCode.DeadlineExceeded);
    expect(error.endpoint).toBe('127.0.0.1:1');
    await client.close();
  });

  it("ends at the client's default deadline when the call gives none", async () => {
    replaceGrpcWireLoaderForTesting(never);
    const client = createTritonClient({
      url: NOWHERE,
      enableGpuIpc: false,
      timeoutMs: 50,
      engine: 'grpc-js',
    });
    const error = await failure(
      client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] }]),
    );
    expect(error.code).toBe(ErrorCode.DeadlineExceeded);
    expect(error.model).toBe('identity');
    await client.close();
  });

  it('rejects at once with CANCELLED when aborted during the load', async () => {
    replaceGrpcWireLoaderForTesting(never);
    const client = createTritonClient({ url: NOWHERE, enableGpuIpc: false });
    const controller = new AbortController();
    const calls = [
      client.modelMetadata('identity', { signal: controller.signal }),
      client.repositoryIndex({ signal: controller.signal }),
      client.grpc.infer({ model: 'identity', inputs: [] }, { signal: controller.signal }),
    ];
    controller.abort();
    for (const call of calls) expect((await failure(call)).code).toBe(ErrorCode.Cancelled);
    await client.close();
  });

  it('ends a stream session whose signal aborts during the load', async () => {
    replaceGrpcWireLoaderForTesting(never);
    const client = createTritonClient({ url: NOWHERE, enableGpuIpc: false });
    const controller = new AbortController();
    const session = client.openStream({ signal: controller.signal });
    const responses = session.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] },
    ]);
    controller.abort();
    const read = (async () => {
      for await (const _ of responses);
    })();
    expect((await failure(read)).code).toBe(ErrorCode.Cancelled);
    await client.close();
  });

  it('carries on with what is left of its deadline once the code is in', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { load, finish } = deferredLoad();
    replaceGrpcWireLoaderForTesting(load);
    const waiting = waitForGrpcWire({ timeoutMs: 10_000, tenant: 'a' }, undefined, {});
    vi.advanceTimersByTime(3_000);
    finish();
    const { wire, options } = await waiting;
    expect(wire.GRPCInferenceService).toBeDefined();
    expect(options).toEqual({ timeoutMs: 7_000, tenant: 'a' });
  });

  it('holds a deadline beyond 2^31 − 1 ms to its end, and takes Infinity as none', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { load, finish } = deferredLoad();
    replaceGrpcWireLoaderForTesting(load);
    const rejected = vi.fn();
    const waiting = waitForGrpcWire({ timeoutMs: 3e9 }, undefined, {});
    waiting.catch(rejected);
    const forever = waitForGrpcWire({ timeoutMs: Number.POSITIVE_INFINITY }, undefined, {});
    await vi.advanceTimersByTimeAsync(3e9 - 1);
    expect(rejected).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(rejected).toHaveBeenCalledWith(expect.objectContaining({ code: ErrorCode.DeadlineExceeded }));
    finish();
    expect((await forever).options).toEqual({ timeoutMs: Number.POSITIVE_INFINITY });
  });

  it('leaves a call without a deadline without one', async () => {
    const { load, finish } = deferredLoad();
    replaceGrpcWireLoaderForTesting(load);
    const waiting = waitForGrpcWire({}, undefined, {});
    finish();
    expect((await waiting).options).toEqual({});
  });

  it("gives up the shared-memory path within its probe's bound, and the call goes on without it", async () => {
    replaceGrpcWireLoaderForTesting(never);
    // A local server, so the stager probes it (its metadata, for the extension) before a large input.
    const client = createTritonClient({ url: NOWHERE, enableGpuIpc: true });
    const large = new Float32Array(512 * 1024); // 2 MiB, over the 1 MiB threshold
    const error = await failure(
      client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, large.length], data: large }]),
    );
    // The default engine's infer needs no message code: past the stager, it fails to connect.
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(client.grpc.sharedMemory?.stats.lastFallbackReason).toMatch(/probe failed/);
    await client.close();
  });
});
