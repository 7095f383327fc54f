import { createTritonClient, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from './otel.js';

let server: TestServer;
let client: TritonClient;
let tracing: ReturnType<typeof installInMemoryTracing>;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  server = await startTestServer();
  client = createTritonClient({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.stop();
  tracing.uninstall();
});

beforeEach(() => tracing.exporter.reset());

describe('OpenTelemetry client spans', () => {
  it('records a client span per RPC with rpc attributes, and the server sees traceparent', async () => {
    await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
    const [span] = tracing.exporter.getFinishedSpans();
    expect(span?.name).toBe('inference.GRPCInferenceService/ModelInfer');
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'inference.GRPCInferenceService',
      'rpc.method': 'ModelInfer',
      'server.address': '127.0.0.1',
      'server.port': server.port,
      'rpc.grpc.status_code': 0,
      'infergate.model': 'identity',
    });
    const traceparent = server.calls.filter((call) => call.method === 'ModelInfer').at(-1)
      ?.metadata.traceparent;
    expect(traceparent).toBe(`00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`);
  });

  it('continues the caller’s active trace', async () => {
    const parent = trace.getTracer('test').startSpan('request handler');
    await context.with(trace.setSpan(context.active(), parent), () => client.serverReady());
    parent.end();
    const rpc = tracing.exporter.getFinishedSpans().find((span) => span.name.endsWith('/ServerReady'));
    expect(rpc?.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(rpc?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  });

  it('marks failed calls with the status code and error type', async () => {
    await client.infer('missing', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]).catch(() => undefined);
    const [span] = tracing.exporter.getFinishedSpans();
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['rpc.grpc.status_code']).toBe(5);
    expect(span?.attributes['error.type']).toBe('NOT_FOUND');
  });

  it('records nothing when tracing is off', async () => {
    const quiet = createTritonClient({ url: server.url, tracing: false });
    await quiet.serverLive();
    await quiet.close();
    expect(tracing.exporter.getFinishedSpans()).toHaveLength(0);
    expect(server.calls.at(-1)?.metadata.traceparent).toBeUndefined();
  });
});
