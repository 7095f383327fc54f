// Does the trace the SDK propagates (`traceparent`) continue through server-side pipelines? This
// file starts its own Triton in OpenTelemetry trace mode (rate 1, OTLP/HTTP JSON to a receiver
// here, see triton-otel.ts) with only the models of examples/triton-models, as
// triton-otel-trace.test.ts does for a plain model, and looks at the spans Triton exports for an
// ensemble call and a BLS call.
import { describe, expect, it } from 'vitest';
import { otelTriton } from './triton-otel.js';

const otel = otelTriton(['preprocess', 'classify', 'classify_ensemble', 'classify_bls']);
const raw = [{ name: 'RAW', datatype: 'FP32' as const, shape: [3], data: [2, 8, 4] }];

describe('trace continuation through server-side pipelines (own Triton, OpenTelemetry mode)', () => {
  // callInTrace waits for the named spans in our trace (see there why a call may be repeated).
  it("an ensemble call: the composing models' spans are in our trace", async () => {
    const { spans } = await otel.callInTrace(
      () => otel.client.infer('classify_ensemble', raw),
      ['classify_ensemble', 'preprocess', 'classify'],
    );
    const ensemble = spans.find((span) => span.name === 'classify_ensemble');
    expect(spans.find((span) => span.name === 'preprocess')?.parentSpanId).toBe(ensemble?.spanId);
    expect(spans.find((span) => span.name === 'classify')?.parentSpanId).toBe(ensemble?.spanId);
  });

  it("a BLS call: the model's span is in our trace, and so are its inner calls", async () => {
    const { spans } = await otel.callInTrace(async () => {
      for await (const _ of otel.client.inferStream('classify_bls', raw)) {
        /* drain */
      }
    }, ['classify_bls', 'preprocess', 'classify']);
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining(['classify_bls', 'preprocess', 'classify']),
    );
  });
});
