import { createTritonClient, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseRpcSemconv, resetRpcSemconv } from '../../packages/core/src/internal/semconv-stability.js';
import { installInMemoryTracing } from './otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from './otel-metrics.js';

let server: TestServer;
let tracing: ReturnType<typeof installInMemoryTracing>;
let meters: InMemoryMetrics | undefined;
const saved = process.env.OTEL_SEMCONV_STABILITY_OPT_IN;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  server = await startTestServer();
});

afterEach(async () => {
  await meters?.uninstall();
  meters = undefined;
  tracing.exporter.reset();
  if (saved === undefined) delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN;
  else process.env.OTEL_SEMCONV_STABILITY_OPT_IN = saved;
  resetRpcSemconv();
});

afterAll(async () => {
  await server.stop();
  tracing.uninstall();
});

async function callWith(optIn: string | undefined): Promise<void> {
  if (optIn === undefined) delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN;
  else process.env.OTEL_SEMCONV_STABILITY_OPT_IN = optIn;
  resetRpcSemconv();
  meters = installInMemoryMetrics();
  const client: TritonClient = createTritonClient({ url: server.url });
  try {
    await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
    await client.infer('missing', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]).catch(() => undefined);
  } finally {
    await client.close();
  }
}

describe('OTEL_SEMCONV_STABILITY_OPT_IN for RPC', () => {
  it('parses rpc, rpc/dup (which wins) and anything else as the old set', () => {
    expect(parseRpcSemconv(undefined)).toEqual({ old: true, stable: false });
    expect(parseRpcSemconv('http,database')).toEqual({ old: true, stable: false });
    expect(parseRpcSemconv('http, rpc')).toEqual({ old: false, stable: true });
    expect(parseRpcSemconv('rpc,rpc/dup')).toEqual({ old: true, stable: true });
  });

  it('by default: rpc.system, short rpc.method, numeric status, rpc.client.duration in ms', async () => {
    await callWith(undefined);
    const span = tracing.exporter.getFinishedSpans().find((each) => each.name.endsWith('/ModelInfer'));
    expect(span?.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.method': 'ModelInfer' });
    expect(span?.attributes['rpc.system.name']).toBeUndefined();
    const collected = await (meters as InMemoryMetrics).collect();
    expect(collected.has('rpc.client.call.duration')).toBe(false);
    const duration = collected.get('rpc.client.duration');
    expect(duration?.descriptor.unit).toBe('ms');
    const points = duration?.dataPoints ?? [];
    const ok = points.find((point) => point.attributes['rpc.grpc.status_code'] === 0);
    const missing = points.find((point) => point.attributes['rpc.grpc.status_code'] === 5);
    expect(ok?.attributes).toMatchObject({ 'rpc.method': 'ModelInfer', 'server.port': server.port });
    expect((ok?.value as Histogram | undefined)?.count).toBe(1);
    expect(missing?.attributes['error.type']).toBe('NOT_FOUND');
  });

  it('with rpc: rpc.system.name, fully qualified rpc.method, status text, rpc.client.call.duration in s', async () => {
    await callWith('rpc');
    const spans = tracing.exporter.getFinishedSpans().filter((each) => each.name.endsWith('/ModelInfer'));
    expect(spans[0]?.attributes).toMatchObject({
      'rpc.system.name': 'grpc',
      'rpc.method': 'inference.GRPCInferenceService/ModelInfer',
      'rpc.status_code': 'OK',
    });
    expect(spans[0]?.attributes['rpc.system']).toBeUndefined();
    expect(spans[0]?.attributes['rpc.grpc.status_code']).toBeUndefined();
    expect(spans[1]?.attributes['rpc.status_code']).toBe('NOT_FOUND');
    const collected = await (meters as InMemoryMetrics).collect();
    expect(collected.has('rpc.client.duration')).toBe(false);
    const duration = collected.get('rpc.client.call.duration');
    expect(duration?.descriptor.unit).toBe('s');
    expect(duration?.dataPoints.map((point) => point.attributes['rpc.status_code']).sort()).toEqual([
      'NOT_FOUND',
      'OK',
    ]);
  });

  it('with rpc/dup: both sets on spans and both metrics', async () => {
    await callWith('rpc/dup');
    const span = tracing.exporter.getFinishedSpans().find((each) => each.name.endsWith('/ModelInfer'));
    expect(span?.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'inference.GRPCInferenceService',
      'rpc.system.name': 'grpc',
      'rpc.method': 'inference.GRPCInferenceService/ModelInfer',
      'rpc.grpc.status_code': 0,
      'rpc.status_code': 'OK',
    });
    const collected = await (meters as InMemoryMetrics).collect();
    expect(collected.has('rpc.client.duration')).toBe(true);
    expect(collected.has('rpc.client.call.duration')).toBe(true);
  });
});
