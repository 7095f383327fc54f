import type { TritonClient } from '@infergate/core';
import { SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('infergate-example-pipeline');
const FEATURES = 16;

export interface PipelineResult {
  traceId: string;
  records: string[];
  /** Per record: features + bias (add_sub OUTPUT0), 16 values. */
  scores: number[][];
}

/**
 * Stage 1, `preprocess`: the raw text records go to `identity` as BYTES (standing in for a
 * tokenizer or feature-extraction model) and come back as strings; each is parsed into 16 features.
 * Stage 2, `score`: one batched `add_sub` call adds a bias vector to every row. Both stages, and the
 * gRPC client span of each call, are children of one `pipeline` span: one trace, whose context also
 * travels to the server as the `traceparent` gRPC header.
 */
export async function runPipeline(client: TritonClient, records: readonly string[]): Promise<PipelineResult> {
  return tracer.startActiveSpan('pipeline', async (root) => {
    try {
      const features = await tracer.startActiveSpan('stage preprocess', async (span) => {
        try {
          const result = await client.infer('identity', [
            { name: 'INPUT0', datatype: 'BYTES', shape: [records.length], data: [...records] },
          ]);
          const texts = result.output('OUTPUT0').strings();
          span.setAttribute('pipeline.records', texts.length);
          return texts.map((text) => {
            const values = text.split(',').map(Number);
            return Array.from({ length: FEATURES }, (_, index) => values[index] ?? 0);
          });
        } finally {
          span.end();
        }
      });
      const scores = await tracer.startActiveSpan('stage score', async (span) => {
        try {
          const rows = features.length;
          const result = await client.infer('add_sub', [
            { name: 'INPUT0', datatype: 'FP32', shape: [rows, FEATURES], data: features.flat() },
            {
              name: 'INPUT1',
              datatype: 'FP32',
              shape: [rows, FEATURES],
              data: new Array(rows * FEATURES).fill(0.5),
            },
          ]);
          const sums = result.output('OUTPUT0').data as Float32Array;
          return features.map((_, row) => Array.from(sums.subarray(row * FEATURES, (row + 1) * FEATURES)));
        } finally {
          span.end();
        }
      });
      return { traceId: root.spanContext().traceId, records: [...records], scores };
    } catch (error) {
      root.recordException(error as Error);
      root.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      root.end();
    }
  });
}
