import { createTritonClient, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from './pipeline.js';
import { installTracing, spanTree } from './tracing.js';

let tracing: ReturnType<typeof installTracing>;
let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  tracing = installTracing();
  server = await startTestServer();
  client = createTritonClient({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.stop();
  await tracing.uninstall();
});

describe('pipeline example', () => {
  it('runs identity (BYTES) then add_sub and returns features + bias per record', async () => {
    const result = await runPipeline(client, ['1,2,3', '10,20,30,40', '0.25']);
    expect(result.scores.map((row) => row.slice(0, 4))).toEqual([
      [1.5, 2.5, 3.5, 0.5],
      [10.5, 20.5, 30.5, 40.5],
      [0.75, 0.5, 0.5, 0.5],
    ]);
    expect(result.scores.every((row) => row.length === 16)).toBe(true);
  });

  it('puts both stages and both gRPC calls in one trace, carried to the server as traceparent', async () => {
    const result = await runPipeline(client, ['4,5']);
    const spans = tracing.spans().filter((span) => span.spanContext().traceId === result.traceId);
    expect(spanTree(spans)).toEqual([
      'pipeline',
      '  stage preprocess',
      '    inference.GRPCInferenceService/ModelInfer',
      '  stage score',
      '    inference.GRPCInferenceService/ModelInfer',
    ]);
    const rpcModels = spans
      .filter((span) => span.name.endsWith('ModelInfer'))
      .map((span) => span.attributes['infergate.model']);
    expect(rpcModels).toEqual(['identity', 'add_sub']);
    const received = server.calls.filter((call) => call.metadata.traceparent?.includes(result.traceId));
    expect(received.map((call) => call.model)).toEqual(['identity', 'add_sub']);
  });
});
