import { parseOptions } from '@infergate/core';
import type { ModelConfig } from '@infergate/core/proto';
import { z } from 'zod';
import { checkMultiTenantPreset } from './check-multi-tenant-preset.js';
import type { ModelConfigInit } from './message-init.js';
import { buildModelConfig } from './model-config-builder.js';

const tenantSchema = z
  .object({
    /** Share of batch rows this tenant gets when several wait (the batcher's deficit round robin). @default 1 */
    weight: z.number().positive().finite().default(1),
    /** End-to-end latency the tenant is promised, in ms; sets its priority and queue timeout. */
    latencyTargetMs: z.number().positive().finite(),
    /** Most requests of this tenant queued in Triton at once; more are rejected at once. */
    maxQueue: z.number().int().positive(),
  })
  .strict();

export const multiTenantPresetOptionsSchema = z
  .object({
    /** The tenants sharing the model, by name. */
    tenants: z.record(z.string().min(1), tenantSchema).refine((tenants) => Object.keys(tenants).length > 0, {
      message: 'name at least one tenant',
    }),
    /**
     * The rest of the model's configuration (name, backend or platform, inputs, outputs, instance
     * groups); the preset adds max_batch_size, dynamic_batching and the rate limiter.
     */
    model: z.custom<ModelConfigInit>(
      (value) => typeof value === 'object' && value !== null,
      'model must be an object',
    ),
    /** Largest batch, on both sides. @default 64 */
    maxBatchSize: z.number().int().positive().default(64),
    /**
     * Longest a request waits to join a batch, in ms, on each side (client batcher and Triton).
     * @default a tenth of the tightest latency target, at most 10
     */
    maxQueueDelayMs: z.number().nonnegative().finite().optional(),
    /** The rate-limiter resource each instance takes one of (share it between models on one GPU). @default "<model>_execution" */
    rateLimiterResource: z.string().min(1).optional(),
    /** The instances' rate-limiter priority across models (1 is scheduled most often). @default 1 */
    rateLimiterPriority: z.number().int().positive().default(1),
  })
  .strict();

// An interface, not a type alias, so that the API reference lists every field.
/** Options of `createMultiTenantPreset`. */
export interface MultiTenantPresetOptions extends z.input<typeof multiTenantPresetOptionsSchema> {}

/** What one tenant's calls carry: the priority Triton queues them at and their deadline. */
export interface TenantCallSettings {
  tenant: string;
  priority: number;
  timeoutMs: number;
}

/** The client side: options for `createMicroBatcher()`, per-tenant call options, router settings. */
export interface MultiTenantClientSettings {
  batcher: {
    maxBatchSize: number;
    maxQueueDelayMs: number;
    maxQueueSize: number;
    priorityLevels: number;
    tenants: Record<string, { weight: number }>;
  };
  tenants: Record<string, TenantCallSettings>;
  router: {
    attemptTimeoutMs: number;
    retry: { maxRetries: number; baseDelayMs: number; maxDelayMs: number };
  };
}

export interface MultiTenantPreset {
  /** The model configuration: load it with `loadModel(name, { config: modelConfigToJson(server) })`. */
  server: ModelConfig;
  client: MultiTenantClientSettings;
}

/**
 * Turns a tenants spec into both sides of multi-tenant batching on one model:
 *
 * - Triton: one priority level per tenant, tightest latency target first (level 1); per level a
 *   queue policy bounded by the tenant's `maxQueue` whose timeout rejects requests that could no
 *   longer meet the target; the lowest level is the default (requests with no priority); each
 *   instance takes one unit of a rate-limiter resource.
 * - The client: batcher options with the tenants' weights, the same priority levels, the same
 *   `maxBatchSize` and delay; per tenant the priority and deadline its calls carry; router
 *   settings whose retries fit inside the tightest target.
 *
 * The two sides are checked against each other (`checkMultiTenantPreset()`) before they are returned.
 */
export function createMultiTenantPreset(options: MultiTenantPresetOptions): MultiTenantPreset {
  const resolved = parseOptions(multiTenantPresetOptionsSchema, options, 'multi-tenant preset options');
  const ordered = Object.entries(resolved.tenants).sort(
    ([nameA, a], [nameB, b]) =>
      a.latencyTargetMs - b.latencyTargetMs || b.weight - a.weight || (nameA < nameB ? -1 : 1),
  );
  const tightest = ordered[0]?.[1].latencyTargetMs ?? 1;
  const loosest = ordered[ordered.length - 1]?.[1].latencyTargetMs ?? 1;
  const delayMs = resolved.maxQueueDelayMs ?? Math.min(10, tightest / 10);
  const queuePolicy = (tenant: z.output<typeof tenantSchema>) => ({
    maxQueueSize: tenant.maxQueue,
    // Waiting longer than this in Triton's queue leaves no time to meet the target: reject instead.
    defaultTimeoutMicroseconds: Math.max(1, Math.round((tenant.latencyTargetMs - delayMs) * 1000)),
    timeoutAction: 'REJECT' as const,
    allowTimeoutOverride: true,
  });
  const lowest = ordered[ordered.length - 1]?.[1];
  const modelName = resolved.model.name ?? 'model';
  const resource = resolved.rateLimiterResource ?? `${modelName}_execution`;
  const groups = resolved.model.instanceGroup ?? [{ kind: 'KIND_GPU' as const, count: 1 }];

  const server = buildModelConfig({
    ...resolved.model,
    maxBatchSize: resolved.maxBatchSize,
    dynamicBatching: {
      maxQueueDelayMicroseconds: Math.round(delayMs * 1000),
      priorityLevels: ordered.length,
      defaultPriorityLevel: ordered.length,
      ...(lowest === undefined ? {} : { defaultQueuePolicy: queuePolicy(lowest) }),
      priorityQueuePolicy: Object.fromEntries(
        ordered.map(([, tenant], index) => [index + 1, queuePolicy(tenant)]),
      ),
    },
    instanceGroup: groups.map((group) => ({
      ...group,
      rateLimiter: { resources: [{ name: resource, count: 1 }], priority: resolved.rateLimiterPriority },
    })),
  });

  const client: MultiTenantClientSettings = {
    batcher: {
      maxBatchSize: resolved.maxBatchSize,
      maxQueueDelayMs: delayMs,
      maxQueueSize: ordered.reduce((sum, [, tenant]) => sum + tenant.maxQueue, 0),
      priorityLevels: ordered.length,
      tenants: Object.fromEntries(ordered.map(([name, tenant]) => [name, { weight: tenant.weight }])),
    },
    tenants: Object.fromEntries(
      ordered.map(([name, tenant], index) => [
        name,
        { tenant: name, priority: index + 1, timeoutMs: tenant.latencyTargetMs },
      ]),
    ),
    router: {
      // An attempt never outlives the loosest promise; the call's own deadline (timeoutMs) cuts it sooner.
      attemptTimeoutMs: Math.ceil(loosest),
      // One retry, waiting at most a quarter of the tightest target, so it can still land in time.
      retry: { maxRetries: 1, baseDelayMs: Math.min(50, tightest / 10), maxDelayMs: tightest / 4 },
    },
  };

  const preset = { server, client };
  checkMultiTenantPreset(preset, { throwOnProblem: true });
  return preset;
}
