// Does the trace the SDK propagates (`traceparent`) continue through server-side pipelines? This
// file starts its own Triton in OpenTelemetry trace mode (rate 1, OTLP/HTTP JSON to a receiver
// here, see triton-otel.ts) with only the models of examples/triton-models, as
// triton-otel-trace.test.ts does for a plain model, and looks at the spans Triton exports for an
// ensemble call and a BLS call.
import { describe, expect, it } from 'vitest';
import { otelTriton, traced } from './triton-otel.js';

const otel = otelTriton(['preprocess', 'classify', 'classify_ensemble', 'classify_bls']);
const names = (traceId: string) => otel.spansOf(traceId).map((span) => span.name);
const raw = [{ name: 'RAW', datatype: 'FP32' as const, shape: [3], data: [2, 8, 4] }];

describe('trace continuation through server-side pipelines (own Triton, OpenTelemetry mode)', () => {
  it("an ensemble call: the composing models' spans are in our trace", async () => {
    const { span } = await traced(() => otel.client.infer('classify_ensemble', raw));
    await expect
      .poll(() => names(span.spanContext().traceId), { timeout: 60_000 })
      .toEqual(expect.arrayContaining(['classify_ensemble', 'preprocess', 'classify']));
  });

  it("a BLS call: the model's span is in our trace, and so are its inner calls", async () => {
    const { span } = await traced(async () => {
      for await (const _ of otel.client.inferStream('classify_bls', raw)) {
        /* drain */
      }
    });
    await expect
      .poll(() => names(span.spanContext().traceId), { timeout: 60_000 })
      .toEqual(expect.arrayContaining(['classify_bls', 'preprocess', 'classify']));
  });
});
