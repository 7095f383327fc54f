import { parseOptions } from '@infergate/core';
import { z } from 'zod';

/** What the batcher needs from a model's configuration. */
export interface ModelBatchingConfig {
  /** Triton's `max_batch_size`: 0 means the model does not batch (calls pass straight through). */
  maxBatchSize: number;
}

/** Reads a model's configuration once (the batcher caches the answer per model and version). */
export type GetModelConfig = (model: string, version: string) => Promise<ModelBatchingConfig>;

/** Anything with `modelConfig()` as `TritonClient` has it. */
export interface ModelConfigSource {
  modelConfig(model: string, options: { version?: string }): Promise<ModelBatchingConfig>;
}

const positiveInt = z.number().int().positive();

export const microBatcherOptionsSchema = z
  .object({
    /**
     * Most rows one batch carries. The model's own `max_batch_size` (when it can be read) lowers it,
     * never raises it. @default 64
     */
    maxBatchSize: positiveInt.default(64),
    /**
     * Longest an item waits for others to join its batch (fixed policy), from when it was queued.
     * @default 10
     */
    maxQueueDelayMs: z.number().nonnegative().finite().default(10),
    /**
     * `adaptive`: send at once while fewer than `maxInFlightBatches` batches are in flight, gather
     * while they are all busy. `fixed`: Triton's dynamic-batcher rule, wait until the batch is full or
     * its oldest item has waited `maxQueueDelayMs`. @default "adaptive"
     */
    flush: z.enum(['adaptive', 'fixed']).default('adaptive'),
    /** Batches in flight at once per model (and version); further items wait in the queue. @default 2 */
    maxInFlightBatches: positiveInt.default(2),
    /** Items queued (not yet sent) across all models; beyond it calls fail with QUEUE_FULL. @default 1024 */
    maxQueueSize: positiveInt.default(1024),
    /** Input bytes queued across all models; beyond it calls fail with QUEUE_FULL. @default 256 MiB */
    maxQueueBytes: positiveInt.default(256 * 1024 * 1024),
    /** Relative share of batch rows per tenant (deficit round robin); unlisted tenants weigh 1. @default {} */
    tenants: z.record(z.string(), z.object({ weight: z.number().positive().finite() }).strict()).default({}),
    /**
     * Highest priority number accepted (Triton's `priority_levels`); a call above it fails with
     * INVALID_ARGUMENT. @default unlimited
     */
    priorityLevels: z.number().int().nonnegative().optional(),
    /** `max_batch_size` per model, given explicitly: no lookup for these models. @default {} */
    models: z
      .record(z.string(), z.object({ maxBatchSize: z.number().int().nonnegative() }).strict())
      .default({}),
    /** Reads `max_batch_size` of a model not listed in `models`. @default none (see `client`) */
    getModelConfig: z
      .custom<GetModelConfig>((value) => typeof value === 'function', 'getModelConfig must be a function')
      .optional(),
    /** A client whose `modelConfig()` is used when `getModelConfig` is not given. @default none */
    client: z
      .custom<ModelConfigSource>(
        (value) =>
          typeof value === 'object' &&
          value !== null &&
          typeof (value as { modelConfig?: unknown }).modelConfig === 'function',
        'client must have a modelConfig() method',
      )
      .optional(),
    /**
     * Extra RPCs one failed batch may spend bisecting an INVALID_ARGUMENT to the calls that caused it;
     * once spent, the undecided calls fail with the batch's error. @default 32
     */
    maxBisectRpcs: z.number().int().nonnegative().default(32),
    /** Batch spans and batcher metrics through @opentelemetry/api (a no-op unless an SDK is registered). @default true */
    tracing: z.boolean().default(true),
  })
  .strict();

export type MicroBatcherOptions = z.input<typeof microBatcherOptionsSchema>;
export type ResolvedMicroBatcherOptions = z.output<typeof microBatcherOptionsSchema>;

/** Validates options; a failure is INVALID_ARGUMENT naming every bad field. */
export function resolveMicroBatcherOptions(options: MicroBatcherOptions = {}): ResolvedMicroBatcherOptions {
  return parseOptions(microBatcherOptionsSchema, options, 'micro-batcher options');
}
