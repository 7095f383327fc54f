import { parseOptions } from '@infergate/core';
import type * as Zod from 'zod';
import type { z } from 'zod';
import { acceptMicroBatcherOptions } from './internal/accept-micro-batcher-options.js';
import { loadZod } from './internal/load-zod.js';

/** What the batcher needs from a model's configuration. */
export interface ModelBatchingConfig {
  /** Triton's `max_batch_size`: 0 means the model does not batch (calls pass straight through). */
  maxBatchSize: number;
  /** The server's own dynamic batcher, when the model has one (see `serverBatching`). */
  dynamicBatching?: { maxQueueDelayUs?: number; preferredBatchSizes?: readonly number[] };
  /**
   * Triton's config as `TritonClient.modelConfig()` returns it: `{ case: 'dynamicBatching', value }`
   * is read like `dynamicBatching`.
   */
  schedulingChoice?: { case?: string | undefined; value?: unknown };
}

/** Reads a model's configuration once (the batcher caches the answer per model and version). */
export type GetModelConfig = (model: string, version: string) => Promise<ModelBatchingConfig>;

/** The server's cumulative counters for one model version, as Triton's statistics RPC reports them. */
export interface ModelQueueStatistics {
  /** Requests completed. */
  requests: number;
  /** Executions (batches) run. */
  executions: number;
  /** Total time requests waited in the server's queue, µs. */
  queueUs: number;
  /** Total compute (infer) time of the executions, µs. */
  computeUs: number;
}

/** Reads a model's cumulative statistics (the `measure` rule of `serverBatching`) within `timeoutMs`. */
export type GetModelStatistics = (
  model: string,
  version: string,
  timeoutMs: number,
) => Promise<ModelQueueStatistics>;

/** Anything with `modelConfig()` (and, optionally, `modelStatistics()`) as `TritonClient` has them. */
export interface ModelConfigSource {
  modelConfig(model: string, options: { version?: string }): Promise<ModelBatchingConfig>;
  modelStatistics?(
    model: string,
    options: { version?: string; timeoutMs?: number },
  ): Promise<
    readonly {
      executionCount: number;
      inference: {
        success: { count: number };
        queue: { ns: bigint };
        computeInfer: { ns: bigint };
      };
    }[]
  >;
}

/** Builds the options schema; zod loads on first use (internal/load-zod.ts, decision 0025). */
function buildMicroBatcherOptionsSchema(z: typeof Zod.z) {
  const positiveInt = z.number().int().positive();
  return z
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
       * `adaptive`: a lone call goes at once; under load, batches fill from the callers a batch's
       * answer is expected to bring back (learned), waiting at most one measured service time and
       * never past `maxQueueDelayMs`, and a further in-flight slot takes only a full batch. Against a
       * server that batches itself, see `serverBatching`. `fixed`: Triton's dynamic-batcher rule, wait
       * until the batch is full or its oldest item has waited `maxQueueDelayMs`. @default "adaptive"
       */
      flush: z.enum(['adaptive', 'fixed']).default('adaptive'),
      /**
       * Adaptive policy, for a model whose config has dynamic batching (the server merges concurrent
       * requests itself). `measure`: send whatever is queued whenever a slot is free (no second queue
       * in front of the server's) until the server's statistics show it merging our requests (1.2 or
       * more per execution) or requests waiting in its queue longer than its own batching delay plus
       * a quarter of an execution; then fill batches on the client, until batches fall under 2 rows.
       * `defer`: always the former. `ignore`: always fill, as for a model without dynamic batching.
       * @default "measure"
       */
      serverBatching: z.enum(['measure', 'defer', 'ignore']).default('measure'),
      /**
       * How often the `measure` rule reads the server's statistics while batches flow, ms; each read
       * is bounded by this interval, and by at least 1 s. @default 1000
       */
      statsIntervalMs: z.number().positive().finite().default(1000),
      /** Reads a model's statistics for the `measure` rule. @default `client.modelStatistics()` */
      getModelStatistics: z
        .custom<GetModelStatistics>(
          (value) => typeof value === 'function',
          'getModelStatistics must be a function',
        )
        .optional(),
      /**
       * Batches in flight at once per model (and version); further items wait in the queue. Under the
       * adaptive policy's fill mode, slots beyond the first take only full batches (or calls that have
       * waited `maxQueueDelayMs`). @default 2
       */
      maxInFlightBatches: positiveInt.default(2),
      /** Items queued (not yet sent) across all models; beyond it calls fail with QUEUE_FULL. @default 1024 */
      maxQueueSize: positiveInt.default(1024),
      /**
       * Admission by expected wait: a call that could wait longer than this before its batch is sent
       * (estimated from a high batch round trip, the longer of the measured mean plus four mean
       * deviations and the 99th percentile of the last 256, the rows queued ahead of it and the batches
       * in flight, plus, for a call that must wait at all, that round trip's excess over the mean once
       * more for its own batch) fails at once with QUEUE_FULL, so that under overload an admitted call
       * is answered within about `maxQueueWaitMs` plus one typical batch round trip of its arrival,
       * also on a machine whose round trips vary. A call that would be sent at once is always
       * admitted. The refusal carries no stack trace (it is cheap to make).
       * @default none (only the size bounds)
       */
      maxQueueWaitMs: z.number().positive().finite().optional(),
      /** Input bytes queued across all models; beyond it calls fail with QUEUE_FULL. @default 256 MiB */
      maxQueueBytes: positiveInt.default(256 * 1024 * 1024),
      /** Relative share of batch rows per tenant (deficit round robin); unlisted tenants weigh 1. @default {} */
      tenants: z
        .record(z.string(), z.object({ weight: z.number().positive().finite() }).strict())
        .default({}),
      /**
       * Highest priority number accepted (Triton's `priority_levels`); a call above it fails with
       * INVALID_ARGUMENT. @default unlimited
       */
      priorityLevels: z.number().int().nonnegative().optional(),
      /**
       * `max_batch_size` per model, given explicitly: no lookup for these models. Its own entries
       * only (a model named `constructor` or `toString` finds none in Object.prototype); a
       * `__proto__` key is dropped, as z.record drops it. @default {}
       */
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
}

type MicroBatcherOptionsSchema = ReturnType<typeof buildMicroBatcherOptionsSchema>;
let schema: MicroBatcherOptionsSchema | undefined;

/** The zod schema of `createMicroBatcher` options (every default documented with @default); loads zod on first use. */
export function microBatcherOptionsSchema(): MicroBatcherOptionsSchema {
  schema ??= buildMicroBatcherOptionsSchema(loadZod());
  return schema;
}

// An interface, not a type alias, so that the API reference lists every field.
/** Options of `createMicroBatcher`. */
export interface MicroBatcherOptions extends z.input<MicroBatcherOptionsSchema> {}
export type ResolvedMicroBatcherOptions = z.output<MicroBatcherOptionsSchema>;

/**
 * Validates options; a failure is INVALID_ARGUMENT naming every bad field. Valid options are read
 * without loading zod (internal/accept-micro-batcher-options.ts); anything else goes to the schema,
 * which decides and words the error. Decision 0025.
 */
export function resolveMicroBatcherOptions(options: MicroBatcherOptions = {}): ResolvedMicroBatcherOptions {
  return (
    acceptMicroBatcherOptions(options) ??
    parseOptions(microBatcherOptionsSchema(), options, 'micro-batcher options')
  );
}
