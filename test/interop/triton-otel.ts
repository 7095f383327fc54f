// What the files that run Triton in OpenTelemetry trace mode share: an OTLP/HTTP JSON receiver on
// 127.0.0.1 that keeps every exported span, an own Triton (the mode is global and chosen at startup
// only, so these files cannot use the shared server) exporting to it, a client, and the in-memory
// OpenTelemetry SDK whose spans the SDK propagates. Started in beforeAll, stopped in afterAll.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { context, type Span, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, expect } from 'vitest';
import { installInMemoryTracing } from '../unit/otel.js';
import { startTriton, type TritonHandle } from './triton-harness.js';

/** One span of an OTLP/JSON export (ids are lowercase hex, as Triton's exporter writes them). */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

export interface OtelTriton {
  readonly triton: TritonHandle;
  readonly client: TritonClient;
  readonly tracing: ReturnType<typeof installInMemoryTracing>;
  /** Every span Triton exported so far, in arrival order. */
  readonly exported: readonly ExportedSpan[];
  /** The exported spans of one trace. */
  spansOf(traceId: string): ExportedSpan[];
  /**
   * Runs `call` under a fresh span of ours (see `traced`) and waits, bounded, until Triton exported
   * the spans named `expected` in that trace; calls again (at most `attempts` calls in all) when
   * Triton exported the request under a trace of its own instead. Why: Triton 2.51 now and then
   * ignores a valid `traceparent` sent over gRPC and starts a new trace (measured: 3 of 40 calls,
   * on one connection and on fresh ones alike; its exporter is not late: with bsp_schedule_delay=100
   * the spans arrive ~50-120 ms after the call, with two CPU hogs too). Its gRPC frontend
   * (GrpcServerCarrier::Get) hands OpenTelemetry the metadata value's `data()` as a C string, and
   * gRPC does not end that value with a NUL, so the parser probably sees bytes past the header and
   * rejects it. Waiting longer for such a call never helps; each attempt here ends as soon as
   * Triton's export shows which way it went. A client that sends no `traceparent` fails every attempt.
   */
  callInTrace<T>(
    call: () => Promise<T>,
    expected: readonly string[],
    attempts?: number,
  ): Promise<{ result: T; span: Span; traceId: string; spans: ExportedSpan[] }>;
}

/** A tiny OTLP/HTTP receiver: keeps the spans of every JSON export POSTed to it. */
function startReceiver(exported: ExportedSpan[]): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: { scopeSpans?: { spans?: ExportedSpan[] }[] }[];
        };
        for (const resource of body.resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? []) exported.push(...(scope.spans ?? []));
      } catch {
        /* not JSON: nothing to keep; the assertions then fail with what was received */
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Registers the file's beforeAll/afterAll that start and stop a Triton in OpenTelemetry mode with `models`. */
export function otelTriton(models: readonly string[]): OtelTriton {
  const exported: ExportedSpan[] = [];
  let receiver: Server | undefined;
  let triton: TritonHandle | undefined;
  let client: TritonClient | undefined;
  let tracing: ReturnType<typeof installInMemoryTracing> | undefined;

  beforeAll(async () => {
    tracing = installInMemoryTracing();
    receiver = await startReceiver(exported);
    const { port } = receiver.address() as AddressInfo;
    triton = await startTriton({ otelTraceUrl: `http://127.0.0.1:${port}/v1/traces`, models: [...models] });
    client = createTritonClient({
      url: triton.grpcAddress,
      enableGpuIpc: false,
      accessToken: triton.accessToken,
    });
  });

  afterAll(async () => {
    await client?.close();
    await triton?.stop();
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
    tracing?.uninstall();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the OpenTelemetry Triton is used before its beforeAll ran');
    return value;
  };
  const spansOf = (traceId: string) => exported.filter((span) => span.traceId === traceId);
  const callInTrace: OtelTriton['callInTrace'] = async (call, expected, attempts = 4) => {
    const outcomes: string[] = [];
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const from = exported.length;
      const { result, span } = await traced(call);
      const traceId = span.spanContext().traceId;
      const names = () => spansOf(traceId).map((exportedSpan) => exportedSpan.name);
      // Triton's own root span of a request has no parent; one of ours has our client span as parent.
      const ownTrace = () =>
        exported
          .slice(from)
          .some((exportedSpan) => exportedSpan.name === 'InferRequest' && !exportedSpan.parentSpanId);
      const outcome = () =>
        expected.every((name) => names().includes(name)) ? 'continued' : ownTrace() ? 'own trace' : 'pending';
      await expect
        .poll(outcome, {
          timeout: 20_000,
          message: `Triton exported neither ${expected.join(', ')} in our trace nor a trace of its own; in ours: ${JSON.stringify(names())}`,
        })
        .not.toBe('pending');
      if (outcome() === 'continued') return { result, span, traceId, spans: spansOf(traceId) };
      outcomes.push(outcome());
    }
    throw new Error(`Triton continued none of ${attempts} traced calls: ${outcomes.join(', ')}`);
  };
  return {
    get triton() {
      return started(triton);
    },
    get client() {
      return started(client);
    },
    get tracing() {
      return started(tracing);
    },
    exported,
    spansOf,
    callInTrace,
  };
}

/** Runs `call` under a fresh span (a request handler of ours); returns its result and that span. */
export async function traced<T>(call: () => Promise<T>): Promise<{ result: T; span: Span }> {
  const span = trace.getTracer('test').startSpan('request handler');
  try {
    const result = await context.with(trace.setSpan(context.active(), span), call);
    return { result, span };
  } finally {
    span.end();
  }
}
