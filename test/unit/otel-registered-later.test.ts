import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type InferRequest, type TritonClient } from '@infergate/core';
import { createInferRouter } from '@infergate/router';
import { startTestServer, type TestServer } from '@infergate/testing';
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  EchoTransport,
  fp32,
  requestOf,
} from '../../packages/batcher/src/internal/testing/echo-transport.js';
import { installInMemoryTracing } from './otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from './otel-metrics.js';

// Decision 0025, second addendum: the batcher and the router skip the OpenTelemetry API while
// nothing is registered with it, and load it once something is. These tests make the batcher and
// the router (and send calls) in the state of a process where nothing was ever registered, then
// register a real SDK (sdk-trace-base with an async-hooks context manager, sdk-metrics) at various
// points, and check that what follows records with the right parents and the right metric values.
//
// The state "nothing registered" is the API's global being absent (what `otelRegistered()` reads):
// each test removes it, and puts back whatever was there before once done.
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
const globals = globalThis as Record<symbol, unknown>;

let server: TestServer;
let client: TritonClient;
let saved: unknown;
let tracing: ReturnType<typeof installInMemoryTracing> | undefined;
let meters: InMemoryMetrics | undefined;

function register(): { tracing: ReturnType<typeof installInMemoryTracing>; meters: InMemoryMetrics } {
  tracing = installInMemoryTracing();
  meters = installInMemoryMetrics();
  return { tracing, meters };
}

const identity = (seed: number): InferRequest => ({
  model: 'identity',
  inputs: [
    { name: 'INPUT0', datatype: 'FP32', shape: [1], raw: new Uint8Array(new Float32Array([seed]).buffer) },
  ],
});

function byName(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  expect(
    found.map((span) => span.name),
    `one span named ${name}`,
  ).toEqual([name]);
  return found[0] as ReadableSpan;
}

function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId, `${child.name} in ${parent.name}'s trace`).toBe(
    parent.spanContext().traceId,
  );
  expect(child.parentSpanContext?.spanId, `${child.name} under ${parent.name}`).toBe(
    parent.spanContext().spanId,
  );
}

async function sumOf(name: string): Promise<number | undefined> {
  const points = await (meters as InMemoryMetrics).points(name);
  if (points.length === 0) return undefined;
  let sum = 0;
  for (const point of points) {
    const value = point.value as number | { count: number };
    sum += typeof value === 'number' ? value : value.count;
  }
  return sum;
}

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url, enableGpuIpc: false });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

beforeEach(() => {
  saved = globals[OTEL_API_GLOBAL];
  delete globals[OTEL_API_GLOBAL];
});

afterEach(async () => {
  await meters?.uninstall();
  tracing?.uninstall();
  meters = undefined;
  tracing = undefined;
  if (saved === undefined) delete globals[OTEL_API_GLOBAL];
  else globals[OTEL_API_GLOBAL] = saved;
});

describe('an SDK registered after the batcher and the router were made', () => {
  it('a batch of a traced caller and an untraced one is a root linked to the traced one', async () => {
    const { tracing } = register();
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, {
      flush: 'fixed',
      maxBatchSize: 2,
      maxQueueDelayMs: 60_000,
    });
    try {
      const untraced = batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, 1)));
      let caller = '';
      const traced = trace.getTracer('app').startActiveSpan('app', (span) => {
        caller = span.spanContext().spanId;
        return batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, 2))).finally(() => span.end());
      });
      await Promise.all([untraced, traced]);
      const batch = byName(tracing.exporter.getFinishedSpans(), 'batch m');
      expect(batch.parentSpanContext).toBeUndefined();
      expect(batch.links.map((link) => link.context.spanId)).toEqual([caller]);
    } finally {
      await batcher.close();
    }
  });

  it('batcher → router → gRPC: spans nest under the caller and metrics arrive, after a call made before', async () => {
    const router = createInferRouter({ name: 'triton', targets: [{ name: 'a', transport: client.grpc }] });
    const batcher = createMicroBatcher(router, { models: { identity: { maxBatchSize: 8 } } });
    try {
      await batcher.infer(identity(1));
      const { tracing } = register();
      expect(tracing.exporter.getFinishedSpans()).toEqual([]);
      const tracer = trace.getTracer('app');
      await tracer.startActiveSpan('app', async (span) => {
        try {
          await batcher.infer(identity(2));
        } finally {
          span.end();
        }
      });
      const spans = tracing.exporter.getFinishedSpans();
      const app = byName(spans, 'app');
      const batch = byName(spans, 'batch identity');
      const attempt = byName(spans, 'infergate.router.attempt');
      const rpc = byName(spans, 'inference.GRPCInferenceService/ModelInfer');
      expectChild(batch, app);
      expectChild(attempt, batch);
      expectChild(rpc, attempt);
      expect(await sumOf('infergate.router.attempts')).toBe(1);
      expect(await sumOf('infergate.batcher.batch.size')).toBe(1);
      expect(await sumOf('infergate.batcher.queue.wait')).toBe(1);
      expect(await sumOf('infergate.batcher.batches.in_flight')).toBe(0);
    } finally {
      await batcher.close();
      await router.close();
    }
  });

  it('router → batcher → gRPC: spans nest under the caller and metrics arrive, after a call made before', async () => {
    const batcher = createMicroBatcher(client.grpc, { models: { identity: { maxBatchSize: 8 } } });
    const router = createInferRouter({ name: 'triton', targets: [{ name: 'a', transport: batcher }] });
    try {
      await router.infer(identity(1));
      const { tracing } = register();
      const tracer = trace.getTracer('app');
      await tracer.startActiveSpan('app', async (span) => {
        try {
          await router.infer(identity(2));
        } finally {
          span.end();
        }
      });
      const spans = tracing.exporter.getFinishedSpans();
      const app = byName(spans, 'app');
      const attempt = byName(spans, 'infergate.router.attempt');
      const batch = byName(spans, 'batch identity');
      const rpc = byName(spans, 'inference.GRPCInferenceService/ModelInfer');
      expectChild(attempt, app);
      expectChild(batch, attempt);
      expectChild(rpc, batch);
      expect(await sumOf('infergate.router.attempts')).toBe(1);
      expect(await sumOf('infergate.batcher.batch.size')).toBe(1);
    } finally {
      await router.close();
      await batcher.close();
    }
  });

  it('a call in flight when the SDK registers: no span half made, in-flight batches back to 0, the next call whole', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const router = createInferRouter({ name: 'r', targets: [{ name: 'a', transport: batcher }] });
    try {
      const first = router.infer(requestOf('m', fp32('INPUT0', 1, 1, 1)));
      await expect.poll(() => transport.held).toBe(1);
      const { tracing } = register();
      transport.release();
      await first;
      // Nothing was started before the registration, so nothing of that call is exported now.
      expect(tracing.exporter.getFinishedSpans()).toEqual([]);
      // The batch sent before counted nothing in flight: its answer must not count one down.
      expect((await sumOf('infergate.batcher.batches.in_flight')) ?? 0).toBe(0);
      // The attempt that straddled the registration is counted as it ends.
      expect(await sumOf('infergate.router.attempts')).toBe(1);

      const tracer = trace.getTracer('app');
      const second = tracer.startActiveSpan('app', (span) =>
        router.infer(requestOf('m', fp32('INPUT0', 1, 1, 2))).finally(() => span.end()),
      );
      await expect.poll(() => transport.held).toBe(1);
      expect(await sumOf('infergate.batcher.batches.in_flight')).toBe(1);
      transport.release();
      await second;
      const spans = tracing.exporter.getFinishedSpans();
      expectChild(byName(spans, 'infergate.router.attempt'), byName(spans, 'app'));
      expectChild(byName(spans, 'batch m'), byName(spans, 'infergate.router.attempt'));
      expect(await sumOf('infergate.batcher.batches.in_flight')).toBe(0);
      expect(await sumOf('infergate.router.attempts')).toBe(2);
    } finally {
      transport.release();
      await router.close();
      await batcher.close();
    }
  });

  it('a call queued before the SDK registers and one after share a batch: the batch is a root linked to the traced one', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, {
      flush: 'fixed',
      maxBatchSize: 2,
      maxQueueDelayMs: 60_000,
    });
    try {
      const queued = batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, 1)));
      const { tracing } = register();
      let caller = '';
      const traced = trace.getTracer('app').startActiveSpan('app', (span) => {
        caller = span.spanContext().spanId;
        return batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, 2))).finally(() => span.end());
      });
      await Promise.all([queued, traced]);
      expect(transport.calls.map((call) => call.rows)).toEqual([2]);
      const batch = byName(tracing.exporter.getFinishedSpans(), 'batch m');
      // A batch of several is a root of its own (docs/concepts/tracing.md): the untraced member's
      // work is not filed under the traced caller's trace.
      expect(batch.parentSpanContext).toBeUndefined();
      expect(batch.links.map((link) => link.context.spanId)).toEqual([caller]);
      expect(batch.attributes['infergate.batch.items']).toBe(2);
    } finally {
      await batcher.close();
    }
  });

  it('a TracerProvider registered after a MeterProvider: spans from then on, metrics throughout', async () => {
    const router = createInferRouter({ name: 'late', targets: [{ name: 'a', transport: client.grpc }] });
    const batcher = createMicroBatcher(router, { models: { identity: { maxBatchSize: 8 } } });
    try {
      meters = installInMemoryMetrics();
      await batcher.infer(identity(1));
      expect(await sumOf('infergate.router.attempts')).toBe(1);
      tracing = installInMemoryTracing();
      await trace
        .getTracer('app')
        .startActiveSpan('app', (span) => batcher.infer(identity(2)).finally(() => span.end()));
      const spans = tracing.exporter.getFinishedSpans();
      expectChild(byName(spans, 'batch identity'), byName(spans, 'app'));
      expectChild(byName(spans, 'infergate.router.attempt'), byName(spans, 'batch identity'));
      expectChild(
        byName(spans, 'inference.GRPCInferenceService/ModelInfer'),
        byName(spans, 'infergate.router.attempt'),
      );
      expect(await sumOf('infergate.router.attempts')).toBe(2);
      expect(await sumOf('infergate.batcher.batch.size')).toBe(2);
    } finally {
      await batcher.close();
      await router.close();
    }
  });

  it('a MeterProvider replaced while a batch is in flight: each provider ends at 0 batches in flight', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    try {
      const { meters: before } = register();
      const first = batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, 1)));
      await expect.poll(() => transport.held).toBe(1);
      expect(await sumOf('infergate.batcher.batches.in_flight')).toBe(1);
      // The application replaces its MeterProvider (a reload of its telemetry set-up, say).
      const { metrics } = await import('@opentelemetry/api');
      metrics.disable();
      const after = installInMemoryMetrics();
      meters = after;
      transport.release();
      await first;
      // The new provider never saw that batch go out: it must not see it come back either.
      expect((await sumOf('infergate.batcher.batches.in_flight')) ?? 0).toBe(0);
      meters = before;
      expect(await sumOf('infergate.batcher.batches.in_flight')).toBe(0);
      meters = after;
      await before.uninstall();
    } finally {
      transport.release();
      await batcher.close();
    }
  });

  it('a MeterProvider registered after the router was made reports its breaker state once a call went through', async () => {
    const router = createInferRouter({ name: 'gauge', targets: [{ name: 'a', transport: client.grpc }] });
    try {
      register();
      await router.infer(identity(3));
      const points = await (meters as InMemoryMetrics).points('infergate.router.breaker.state');
      expect(
        points
          .filter((point) => point.attributes['infergate.router'] === 'gauge')
          .map((point) => point.value),
      ).toEqual([0]);
    } finally {
      await router.close();
    }
  });
});
