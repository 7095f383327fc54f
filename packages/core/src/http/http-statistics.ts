import type { BatchStatistics, Duration, ModelStatistics, ResponseStatistics } from '../statistics.js';

// Triton's HTTP statistics are the protobuf messages in JSON (snake_case names, 64-bit counters as
// numbers); they become the same ModelStatistics the gRPC client returns.
type Json = Record<string, unknown>;

const object = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {});
const number = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0) || 0);

function duration(value: unknown): Duration {
  const wire = object(value);
  const ns = BigInt(Math.round(number(wire.ns)));
  return { count: number(wire.count), ns, ms: Number(ns) / 1e6 };
}

function batch(value: unknown): BatchStatistics {
  const wire = object(value);
  return {
    batchSize: number(wire.batch_size),
    computeInput: duration(wire.compute_input),
    computeInfer: duration(wire.compute_infer),
    computeOutput: duration(wire.compute_output),
  };
}

function responses(value: unknown): Record<string, ResponseStatistics> {
  const out: Record<string, ResponseStatistics> = {};
  for (const [key, item] of Object.entries(object(value))) {
    const wire = object(item);
    out[key] = {
      computeInfer: duration(wire.compute_infer),
      computeOutput: duration(wire.compute_output),
      success: duration(wire.success),
      fail: duration(wire.fail),
      emptyResponse: duration(wire.empty_response),
      cancel: duration(wire.cancel),
    };
  }
  return out;
}

export function fromStatisticsJson(value: unknown): ModelStatistics {
  const wire = object(value);
  const stats = object(wire.inference_stats);
  const last = number(wire.last_inference);
  return {
    name: String(wire.name ?? ''),
    version: String(wire.version ?? ''),
    lastInference: last > 0 ? new Date(last) : undefined,
    inferenceCount: number(wire.inference_count),
    executionCount: number(wire.execution_count),
    inference: {
      success: duration(stats.success),
      fail: duration(stats.fail),
      queue: duration(stats.queue),
      computeInput: duration(stats.compute_input),
      computeInfer: duration(stats.compute_infer),
      computeOutput: duration(stats.compute_output),
      cacheHit: duration(stats.cache_hit),
      cacheMiss: duration(stats.cache_miss),
    },
    batches: Array.isArray(wire.batch_stats) ? wire.batch_stats.map(batch) : [],
    responses: responses(wire.response_stats),
    memoryUsage: (Array.isArray(wire.memory_usage) ? wire.memory_usage : []).map((usage: unknown) => {
      const item = object(usage);
      return { type: String(item.type ?? ''), id: number(item.id), byteSize: number(item.byte_size) };
    }),
  };
}
