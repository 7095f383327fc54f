// Triton's OpenTelemetry trace mode continues the trace that @infergate/core propagates (W3C
// `traceparent` in the gRPC metadata of every RPC). The mode is global and chosen at startup only,
// and triton-access.test.ts expects the shared server in Triton's own mode, so this file starts its
// own small Triton (one model, OTel mode, rate 1) exporting OTLP/HTTP JSON to a receiver here.
// See README.md in this folder and docs/decisions/0003-interop-suite-findings.md.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { context, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../unit/otel.js';
import { startTriton, type TritonHandle } from './triton-harness.js';
import { sleep } from './triton-helpers.js';

/** One span of an OTLP/JSON export (ids are lowercase hex, as Triton's exporter writes them). */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

let receiver: Server;
const exported: ExportedSpan[] = [];
let triton: TritonHandle | undefined;
let client: TritonClient;
let tracing: ReturnType<typeof installInMemoryTracing>;

/** A tiny OTLP/HTTP receiver: keeps the spans of every JSON export POSTed to it. */
function startReceiver(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: { scopeSpans?: { spans?: ExportedSpan[] }[] }[];
        };
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) exported.push(...(ss.spans ?? []));
      } catch {
        /* not JSON: nothing to keep; the assertions then fail with what was received */
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Spans of one trace, waiting (the exporter batches every 100 ms) until `name` is among them. */
async function spansOf(traceId: string, name: string, ms = 15_000): Promise<ExportedSpan[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const spans = exported.filter((span) => span.traceId === traceId);
    if (spans.some((span) => span.name === name) || Date.now() > deadline) return spans;
    await sleep(50);
  }
}

beforeAll(async () => {
  tracing = installInMemoryTracing();
  receiver = await startReceiver();
  const { port } = receiver.address() as AddressInfo;
  triton = await startTriton({
    otelTraceUrl: `http://127.0.0.1:${port}/v1/traces`,
    models: ['identity_fp32'],
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

describe("Triton's OpenTelemetry trace mode (own server: identity_fp32, rate 1)", () => {
  it('runs in opentelemetry mode at startup', async () => {
    expect(await client.traceSettings()).toMatchObject({
      trace_mode: ['opentelemetry'],
      trace_level: ['TIMESTAMPS'],
      trace_rate: ['1'],
    });
  });

  it("continues our trace: Triton's request span has our trace id and our client span as parent", async () => {
    const handler = trace.getTracer('test').startSpan('request handler');
    const result = await context.with(trace.setSpan(context.active(), handler), () =>
      client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }]),
    );
    handler.end();
    expect(result.output('OUTPUT0').toArray()).toEqual([1, 2]);

    const rpc = tracing.exporter
      .getFinishedSpans()
      .find((span) => span.name === 'inference.GRPCInferenceService/ModelInfer');
    const traceId = handler.spanContext().traceId;
    expect(rpc?.spanContext().traceId).toBe(traceId);
    expect(rpc?.parentSpanContext?.spanId).toBe(handler.spanContext().spanId);

    const spans = await spansOf(traceId, 'compute');
    const request = spans.find((span) => span.name === 'InferRequest');
    expect(request, `spans received: ${JSON.stringify(exported.map((s) => s.name))}`).toBeDefined();
    expect(request?.traceId).toBe(traceId);
    expect(request?.parentSpanId).toBe(rpc?.spanContext().spanId);
    // Below it, Triton's model span and compute span, in the same trace.
    const model = spans.find((span) => span.name === 'identity_fp32');
    expect(model?.parentSpanId).toBe(request?.spanId);
    expect(model?.attributes?.find((a) => a.key === 'triton.model_name')?.value).toEqual({
      stringValue: 'identity_fp32',
    });
    expect(spans.find((span) => span.name === 'compute')?.parentSpanId).toBe(model?.spanId);
  });

  it('starts a trace of its own when the client sends no traceparent', async () => {
    const quiet = createTritonClient({ url: triton?.grpcAddress ?? '', enableGpuIpc: false, tracing: false });
    try {
      await quiet.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [3] }]);
      // Every trace this file started holds a span of the in-memory exporter; Triton's own does not.
      const ours = new Set(tracing.exporter.getFinishedSpans().map((span) => span.spanContext().traceId));
      const deadline = Date.now() + 15_000;
      let root: ExportedSpan | undefined;
      while (!root && Date.now() < deadline) {
        root = exported.find((span) => span.name === 'InferRequest' && !ours.has(span.traceId));
        if (!root) await sleep(50);
      }
      expect(root, `spans received: ${JSON.stringify(exported.map((s) => s.name))}`).toBeDefined();
      expect(root?.parentSpanId ?? '').toBe('');
    } finally {
      await quiet.close();
    }
  });
});
