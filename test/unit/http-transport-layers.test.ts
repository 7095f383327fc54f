// The HTTP transport is just another InferTransport: a batcher and a router take it unchanged, and
// a server killed under the router fails over to the other one. Reference servers on 127.0.0.1.
import { createMicroBatcher } from '@infergate/batcher';
import {
  createHttpClient,
  createHttpTransport,
  ErrorCode,
  type HttpTransport,
  InfergateError,
} from '@infergate/core/http';
import { createRouter } from '@infergate/router';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let first: TestServer;
let second: TestServer;
const transports: HttpTransport[] = [];

function transport(server: TestServer): HttpTransport {
  const created = createHttpTransport({ url: server.httpUrl, binaryData: true });
  transports.push(created);
  return created;
}

beforeAll(async () => {
  first = await startTestServer({
    http: true,
    stopGraceMs: 100,
    simulatedGpu: { baseMs: 1, perRowMs: 0.01, maxBatchSize: 8 },
  });
  second = await startTestServer({ http: true, stopGraceMs: 100 });
});

afterAll(async () => {
  for (const created of transports) created.close();
  await first?.stop();
  await second?.stop();
});

const row = (value: number) => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 2], data: [value, -value] },
];

describe('HTTP transport under the batcher and the router', () => {
  it('a batcher over HTTP coalesces calls and returns each caller its own rows', async () => {
    const http = transport(first);
    const batcher = createMicroBatcher(http, {
      models: { simulated_gpu: { maxBatchSize: 8 } },
      maxInFlightBatches: 1,
    });
    const client = createHttpClient({ url: first.httpUrl, transport: batcher });
    first.reset();
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, seed) => client.infer('simulated_gpu', row(seed))),
    );
    results.forEach((result, seed) => {
      expect(Array.from(result.output('OUTPUT0').data as Float32Array)).toEqual([2 * seed, -2 * seed]);
    });
    expect(first.gpu.stats().executions).toBeLessThan(24);
    expect(first.gpu.stats().maxBatchSize).toBeGreaterThan(1);
    // Nothing closes what it was handed: the client leaves the batcher to whoever created it.
    await client.close();
    const again = createHttpClient({ url: first.httpUrl, transport: batcher });
    expect((await again.infer('simulated_gpu', row(3))).output('OUTPUT0').toArray()).toEqual([6, -6]);
    await again.close();
    await batcher.close();
  });

  it('a router over two HTTP endpoints fails over when one is killed', async () => {
    const router = createRouter({
      targets: [
        { name: 'first', transport: transport(first) },
        { name: 'second', transport: transport(second) },
      ],
    });
    const client = createHttpClient({ url: first.httpUrl, transport: router });
    try {
      const before = await client.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [1, 2, 3] }]);
      expect(before.output('OUTPUT0').toArray()).toEqual([1, 2, 3]);
      first.kill();
      const after = await client.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [4, 5] }]);
      expect(after.output('OUTPUT0').toArray()).toEqual([4, 5]);
      expect(second.calls.some((call) => call.method === 'ModelInfer')).toBe(true);
    } finally {
      await client.close();
      await router.close();
      await first.restart();
    }
  });

  it('a killed endpoint alone is UNAVAILABLE, retryable', async () => {
    const lone = await startTestServer({ http: true, stopGraceMs: 100 });
    const http = transport(lone);
    const url = lone.httpUrl;
    await lone.stop();
    const client = createHttpClient({ url, transport: http });
    const error = await client
      .infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [1] }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
    expect((error as InfergateError).retryable).toBe(true);
  });
});
