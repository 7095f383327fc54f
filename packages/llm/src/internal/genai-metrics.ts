import { createGenAiTimingHistograms, lazyInstruments } from '@infergate/core';
import { otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes } from '@opentelemetry/api';
import type { ChatUsage } from '../types.js';
import { VERSION } from '../version.js';

const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

// Rebuilt when the application registers (or replaces) its MeterProvider, even after the model was made.
const registeredInstruments = lazyInstruments('@infergate/llm', VERSION, (meter) => ({
  ...createGenAiTimingHistograms(meter),
  tokens: meter.createHistogram('gen_ai.client.token.usage', {
    description: 'Number of input and output tokens used',
    unit: '{token}',
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  }),
}));

/**
 * The GenAI instruments, or `undefined` while no MeterProvider is registered. While nothing at all
 * is registered with the OpenTelemetry API this answers without loading it.
 */
function instruments() {
  return otelRegistered() ? registeredInstruments() : undefined;
}

export interface ChatMetricsOptions {
  enabled: boolean;
  provider: string;
  model: string;
  server: { address: string; port: number | undefined } | undefined;
}

/** The GenAI client metrics of one chat call. */
export interface ChatMetrics {
  /** A streamed chunk (text delta) arrived. */
  chunk(): void;
  end(
    result: { model?: string | undefined; usage?: ChatUsage | undefined } | undefined,
    errorType?: string,
  ): void;
}

const noop: ChatMetrics = { chunk() {}, end() {} };

/**
 * Records `gen_ai.client.operation.duration`, `gen_ai.client.token.usage` (by `gen_ai.token.type`)
 * and, for streams, `gen_ai.client.operation.time_to_first_chunk` and
 * `gen_ai.client.operation.time_per_output_chunk`, as the GenAI semantic conventions name them.
 */
export function startChatMetrics(options: ChatMetricsOptions): ChatMetrics {
  if (!options.enabled) return noop;
  const started = performance.now();
  let last: number | undefined;
  const base: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': options.provider,
    'gen_ai.request.model': options.model,
  };
  if (options.server !== undefined) {
    base['server.address'] = options.server.address;
    if (options.server.port !== undefined) base['server.port'] = options.server.port;
  }
  let ended = false;
  return {
    chunk() {
      const recording = instruments();
      if (recording === undefined) return;
      const now = performance.now();
      if (last === undefined) recording.firstChunk.record((now - started) / 1000, base);
      else recording.perChunk.record((now - last) / 1000, base);
      last = now;
    },
    end(result, errorType) {
      if (ended) return;
      ended = true;
      const recording = instruments();
      if (recording === undefined) return;
      const { duration, tokens } = recording;
      const attributes: Attributes = { ...base };
      if (result?.model !== undefined && result.model !== '')
        attributes['gen_ai.response.model'] = result.model;
      const usage = result?.usage;
      if (usage?.inputTokens !== undefined)
        tokens.record(usage.inputTokens, { ...attributes, 'gen_ai.token.type': 'input' });
      if (usage?.outputTokens !== undefined)
        tokens.record(usage.outputTokens, { ...attributes, 'gen_ai.token.type': 'output' });
      if (errorType !== undefined) attributes['error.type'] = errorType;
      duration.record((performance.now() - started) / 1000, attributes);
    },
  };
}
