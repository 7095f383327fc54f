import type { Histogram, Meter } from '@opentelemetry/api';

// Bucket advice from the GenAI semantic conventions.
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const CHUNK_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];

/** The GenAI client histograms of a chat call's timing, as both the llm adapters and the chat router record them. */
export interface GenAiTimingHistograms {
  duration: Histogram;
  firstChunk: Histogram;
  perChunk: Histogram;
}

/**
 * Creates `gen_ai.client.operation.duration`, `…time_to_first_chunk` and `…time_per_output_chunk`
 * on a meter, with the conventions' units and bucket advice, so every package that records GenAI
 * timing names and buckets it the same way.
 */
export function createGenAiTimingHistograms(meter: Meter): GenAiTimingHistograms {
  return {
    duration: meter.createHistogram('gen_ai.client.operation.duration', {
      description: 'GenAI operation duration',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    firstChunk: meter.createHistogram('gen_ai.client.operation.time_to_first_chunk', {
      description: 'Time from sending a streamed request to receiving its first chunk',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    perChunk: meter.createHistogram('gen_ai.client.operation.time_per_output_chunk', {
      description: 'Time between consecutive chunks of a streamed response, after the first',
      unit: 's',
      advice: { explicitBucketBoundaries: CHUNK_BUCKETS },
    }),
  };
}
