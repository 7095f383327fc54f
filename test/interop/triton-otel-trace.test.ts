// Triton's OpenTelemetry trace mode continues the trace that @infergate/core propagates (W3C
// `traceparent` in the gRPC metadata of every RPC). The mode is global and chosen at startup only,
// and triton-access.test.ts expects the shared server in Triton's own mode, so this file starts its
// own small Triton (one model, OTel mode, rate 1) exporting OTLP/HTTP JSON to a receiver here.
// See README.md in this folder and docs/decisions/0003-interop-suite-findings.md.
import { createTritonClient } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { otelTriton } from './triton-otel.js';

const otel = otelTriton(['identity_fp32']);
const received = () => `spans received: ${JSON.stringify(otel.exported.map((span) => span.name))}`;

describe("Triton's OpenTelemetry trace mode (own server: identity_fp32, rate 1)", () => {
  it('runs in opentelemetry mode at startup', async () => {
    expect(await otel.client.traceSettings()).toMatchObject({
      trace_mode: ['opentelemetry'],
      trace_level: ['TIMESTAMPS'],
      trace_rate: ['1'],
    });
  });

  it("continues our trace: Triton's request span has our trace id and our client span as parent", async () => {
    // callInTrace waits for Triton's spans in our trace (see there why a call may be repeated).
    const {
      result,
      span: handler,
      traceId,
      spans,
    } = await otel.callInTrace(
      () => otel.client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }]),
      ['InferRequest', 'identity_fp32', 'compute'],
    );
    expect(result.output('OUTPUT0').toArray()).toEqual([1, 2]);

    const rpc = otel.tracing.exporter
      .getFinishedSpans()
      .find(
        (span) =>
          span.name === 'inference.GRPCInferenceService/ModelInfer' && span.spanContext().traceId === traceId,
      );
    expect(rpc?.parentSpanContext?.spanId).toBe(handler.spanContext().spanId);
    const request = spans.find((span) => span.name === 'InferRequest');
    expect(request, received()).toBeDefined();
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
    const quiet = createTritonClient({ url: otel.triton.grpcAddress, enableGpuIpc: false, tracing: false });
    try {
      const from = otel.exported.length;
      await quiet.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [3] }]);
      // Every trace this file started holds a span of the in-memory exporter; Triton's own does not.
      const ours = new Set(
        otel.tracing.exporter.getFinishedSpans().map((span) => span.spanContext().traceId),
      );
      const root = () =>
        otel.exported.slice(from).find((span) => span.name === 'InferRequest' && !ours.has(span.traceId));
      await expect.poll(root, { timeout: 20_000 }).toBeDefined();
      expect(root()?.parentSpanId ?? '').toBe('');
    } finally {
      await quiet.close();
    }
  });
});
