// Does the trace the SDK propagates (`traceparent`) continue through server-side pipelines? This
// file starts its own Triton in OpenTelemetry trace mode (rate 1, OTLP/HTTP JSON to a receiver
// here) with only the models of examples/triton-models, as triton-otel-trace.test.ts does for a
// plain model, and looks at the spans Triton exports for an ensemble call and a BLS call.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { context, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../unit/otel.js';
import { startTriton, type TritonHandle } from './triton-harness.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

let receiver: Server;
const exported: ExportedSpan[] = [];
let triton: TritonHandle | undefined;
let client: TritonClient;
let tracing: ReturnType<typeof installInMemoryTracing>;

function startReceiver(): Promise<Server> {
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
        /* not JSON: the assertions then fail with what was received */
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Runs `call` under a fresh span and returns that span's trace id. */
async function traced(call: () => Promise<unknown>): Promise<string> {
  const handler = trace.getTracer('test').startSpan('request handler');
  await context.with(trace.setSpan(context.active(), handler), call);
  handler.end();
  return handler.spanContext().traceId;
}

const names = (traceId: string) =>
  exported.filter((span) => span.traceId === traceId).map((span) => span.name);
const raw = [{ name: 'RAW', datatype: 'FP32' as const, shape: [3], data: [2, 8, 4] }];

beforeAll(async () => {
  tracing = installInMemoryTracing();
  receiver = await startReceiver();
  const { port } = receiver.address() as AddressInfo;
  triton = await startTriton({
    otelTraceUrl: `http://127.0.0.1:${port}/v1/traces`,
    models: ['preprocess', 'classify', 'classify_ensemble', 'classify_bls'],
  });
  client = createTritonClient({
    url: triton.grpcAddress,
    enableGpuIpc: false,
    accessToken: triton.accessToken,
  });
});

afterAll(async () => {
  await client?.close();
  await triton?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  tracing?.uninstall();
});

describe('trace continuation through server-side pipelines (own Triton, OpenTelemetry mode)', () => {
  it("an ensemble call: the composing models' spans are in our trace", async () => {
    const traceId = await traced(() => client.infer('classify_ensemble', raw));
    await expect
      .poll(() => names(traceId), { timeout: 60_000 })
      .toEqual(expect.arrayContaining(['classify_ensemble', 'preprocess', 'classify']));
  });

  it("a BLS call: the model's span is in our trace, and so are its inner calls", async () => {
    const traceId = await traced(async () => {
      for await (const _ of client.inferStream('classify_bls', raw)) {
        /* drain */
      }
    });
    await expect
      .poll(() => names(traceId), { timeout: 60_000 })
      .toEqual(expect.arrayContaining(['classify_bls', 'preprocess', 'classify']));
  });
});
