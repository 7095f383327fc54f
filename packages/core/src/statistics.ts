import type {
  InferBatchStatistics,
  StatisticDuration,
  ModelStatistics as WireModelStatistics,
} from './gen/grpc_service_pb.js';

/** A cumulative duration: how many, how long in total (ns exact as bigint, ms as a number). */
export interface Duration {
  count: number;
  ns: bigint;
  ms: number;
}

export interface InferenceStatistics {
  success: Duration;
  fail: Duration;
  queue: Duration;
  computeInput: Duration;
  computeInfer: Duration;
  computeOutput: Duration;
  cacheHit: Duration;
  cacheMiss: Duration;
}

export interface BatchStatistics {
  batchSize: number;
  computeInput: Duration;
  computeInfer: Duration;
  computeOutput: Duration;
}

export interface ResponseStatistics {
  computeInfer: Duration;
  computeOutput: Duration;
  success: Duration;
  fail: Duration;
  emptyResponse: Duration;
  cancel: Duration;
}

export interface ModelStatistics {
  name: string;
  version: string;
  /** When the last inference ran; undefined if never. */
  lastInference: Date | undefined;
  /** Rows inferred (a batch of 8 counts 8). */
  inferenceCount: number;
  /** Model executions (a batch of 8 counts 1). */
  executionCount: number;
  inference: InferenceStatistics;
  batches: BatchStatistics[];
  /** Decoupled models: per response index (as a string key). */
  responses: Record<string, ResponseStatistics>;
  memoryUsage: { type: string; id: number; byteSize: number }[];
}

function duration(wire: StatisticDuration | undefined): Duration {
  const ns = wire?.ns ?? 0n;
  return { count: Number(wire?.count ?? 0n), ns, ms: Number(ns) / 1e6 };
}

function batch(wire: InferBatchStatistics): BatchStatistics {
  return {
    batchSize: Number(wire.batchSize),
    computeInput: duration(wire.computeInput),
    computeInfer: duration(wire.computeInfer),
    computeOutput: duration(wire.computeOutput),
  };
}

export function toModelStatistics(wire: WireModelStatistics): ModelStatistics {
  const stats = wire.inferenceStats;
  const responses: Record<string, ResponseStatistics> = {};
  for (const [key, value] of Object.entries(wire.responseStats)) {
    responses[key] = {
      computeInfer: duration(value.computeInfer),
      computeOutput: duration(value.computeOutput),
      success: duration(value.success),
      fail: duration(value.fail),
      emptyResponse: duration(value.emptyResponse),
      cancel: duration(value.cancel),
    };
  }
  return {
    name: wire.name,
    version: wire.version,
    lastInference: wire.lastInference > 0n ? new Date(Number(wire.lastInference)) : undefined,
    inferenceCount: Number(wire.inferenceCount),
    executionCount: Number(wire.executionCount),
    inference: {
      success: duration(stats?.success),
      fail: duration(stats?.fail),
      queue: duration(stats?.queue),
      computeInput: duration(stats?.computeInput),
      computeInfer: duration(stats?.computeInfer),
      computeOutput: duration(stats?.computeOutput),
      cacheHit: duration(stats?.cacheHit),
      cacheMiss: duration(stats?.cacheMiss),
    },
    batches: wire.batchStats.map(batch),
    responses,
    memoryUsage: wire.memoryUsage.map((usage) => ({
      type: usage.type,
      id: Number(usage.id),
      byteSize: Number(usage.byteSize),
    })),
  };
}
