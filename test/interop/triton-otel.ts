// What the files that run Triton in OpenTelemetry trace mode share: an OTLP/HTTP JSON receiver on
// 127.0.0.1 that keeps every exported span, an own Triton (the mode is global and chosen at startup
// only, so these files cannot use the shared server) exporting to it, a client, and the in-memory
// OpenTelemetry SDK whose spans the SDK propagates. Started in beforeAll, stopped in afterAll.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { context, type Span, trace } from '@opentelemetry/api';
import { afterAll, beforeAll } from 'vitest';
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
    spansOf: (traceId) => exported.filter((span) => span.traceId === traceId),
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
