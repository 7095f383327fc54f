import { clone } from '@bufbuild/protobuf';
import { resolveMicroBatcherOptions } from '@infergate/batcher';
import { InfergateError, type InferTransport } from '@infergate/core';
import { ModelConfigSchema, ModelQueuePolicy_TimeoutAction } from '@infergate/core/proto';
import { createRouter } from '@infergate/router';
import { describe, expect, it } from 'vitest';
import { checkMultiTenantPreset } from './check-multi-tenant-preset.js';
import { lintModelConfig } from './lint-model-config.js';
import { printModelConfig } from './model-config-text.js';
import { createMultiTenantPreset, type MultiTenantPresetOptions } from './multi-tenant-preset.js';

const options = {
  model: {
    name: 'classifier',
    backend: 'python',
    input: [{ name: 'INPUT0', dataType: 'FP32', dims: [4] }],
    output: [{ name: 'OUTPUT0', dataType: 'FP32', dims: [4] }],
    instanceGroup: [{ kind: 'KIND_CPU', count: 2 }],
  },
  tenants: {
    batch: { weight: 1, latencyTargetMs: 2000, maxQueue: 512 },
    interactive: { weight: 4, latencyTargetMs: 50, maxQueue: 32 },
    standard: { weight: 2, latencyTargetMs: 200, maxQueue: 128 },
  },
} satisfies MultiTenantPresetOptions;

const batching = (config: ReturnType<typeof createMultiTenantPreset>['server']) => {
  if (config.schedulingChoice.case !== 'dynamicBatching') throw new Error('no dynamic batching');
  return config.schedulingChoice.value;
};

describe('createMultiTenantPreset', () => {
  it('gives each tenant a priority level, tightest target first, with a bounded queue that rejects late requests', () => {
    const { server } = createMultiTenantPreset(options);
    const dynamic = batching(server);
    expect(server.maxBatchSize).toBe(64);
    expect(dynamic.priorityLevels).toBe(3n);
    expect(dynamic.defaultPriorityLevel).toBe(3n);
    expect(dynamic.maxQueueDelayMicroseconds).toBe(5000n); // a tenth of 50 ms
    expect(dynamic.priorityQueuePolicy[1]).toMatchObject({
      maxQueueSize: 32,
      defaultTimeoutMicroseconds: 45_000n,
      timeoutAction: ModelQueuePolicy_TimeoutAction.REJECT,
      allowTimeoutOverride: true,
    });
    expect(dynamic.priorityQueuePolicy[2]?.maxQueueSize).toBe(128);
    expect(dynamic.priorityQueuePolicy[3]?.defaultTimeoutMicroseconds).toBe(1_995_000n);
    expect(dynamic.defaultQueuePolicy?.maxQueueSize).toBe(512);
    expect(server.instanceGroup[0]?.rateLimiter).toMatchObject({
      resources: [{ name: 'classifier_execution', count: 1 }],
      priority: 1,
    });
    expect(printModelConfig(server)).toContain('priority_queue_policy {\n    key: 1\n');
  });

  it('passes every lint rule for the latency budget of its tightest tenant', () => {
    const { server } = createMultiTenantPreset(options);
    expect(lintModelConfig(server, { latencyBudgetMs: 50, gpus: 0, streamingClient: false })).toEqual([]);
  });

  it('gives the client the same levels, weights, batch size and delay; the batcher and router take them', async () => {
    const { client } = createMultiTenantPreset(options);
    expect(client.batcher).toEqual({
      maxBatchSize: 64,
      maxQueueDelayMs: 5,
      maxQueueSize: 672,
      priorityLevels: 3,
      tenants: { interactive: { weight: 4 }, standard: { weight: 2 }, batch: { weight: 1 } },
    });
    expect(client.tenants.interactive).toEqual({ tenant: 'interactive', priority: 1, timeoutMs: 50 });
    expect(client.tenants.batch).toEqual({ tenant: 'batch', priority: 3, timeoutMs: 2000 });
    expect(client.router).toEqual({
      attemptTimeoutMs: 2000,
      retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 12.5 },
    });
    expect(resolveMicroBatcherOptions(client.batcher)).toMatchObject({ priorityLevels: 3, maxBatchSize: 64 });
    // The router takes its settings as they are (nothing is called here).
    const transport: InferTransport = {
      infer: () => Promise.reject(new Error('not called')),
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('not called')) }),
      }),
    };
    await createRouter({ targets: [{ name: 'triton', transport }], ...client.router }).close();
    // …and it does check them: an attempt timeout that is not a whole number of ms is refused.
    expect(() =>
      createRouter({ targets: [{ name: 'triton', transport }], ...client.router, attemptTimeoutMs: 1.5 }),
    ).toThrow(InfergateError);
  });

  it('honours maxBatchSize and maxQueueDelayMs', () => {
    const { server, client } = createMultiTenantPreset({ ...options, maxBatchSize: 16, maxQueueDelayMs: 2 });
    expect(server.maxBatchSize).toBe(16);
    expect(batching(server).maxQueueDelayMicroseconds).toBe(2000n);
    expect(client.batcher.maxQueueDelayMs).toBe(2);
  });

  it('refuses a bad tenants spec, naming the field', () => {
    expect(() => createMultiTenantPreset({ ...options, tenants: {} })).toThrow(/name at least one tenant/);
    expect(() =>
      createMultiTenantPreset({
        ...options,
        tenants: { a: { weight: -1, latencyTargetMs: 10, maxQueue: 1 } },
      }),
    ).toThrow(/tenants\.a\.weight/);
    // A delay that eats the whole deadline cannot be matched by any server config.
    expect(() => createMultiTenantPreset({ ...options, maxQueueDelayMs: 30 })).toThrow(InfergateError);
    expect(() => createMultiTenantPreset({ ...options, maxQueueDelayMs: 30 })).toThrow(
      "tenant 'interactive' (priority 1): batching delays (client 30 ms + server 30 ms) use up the 50 ms deadline",
    );
  });
});

describe('checkMultiTenantPreset', () => {
  it('finds where a server config drifted from the client settings', () => {
    const preset = createMultiTenantPreset(options);
    expect(checkMultiTenantPreset(preset)).toEqual([]);
    const server = clone(ModelConfigSchema, preset.server);
    const dynamic = batching(server);
    dynamic.priorityLevels = 2n;
    delete dynamic.priorityQueuePolicy[2];
    const first = dynamic.priorityQueuePolicy[1];
    if (first !== undefined) {
      first.maxQueueSize = 0;
      first.defaultTimeoutMicroseconds = 0n;
    }
    server.maxBatchSize = 8;
    expect(checkMultiTenantPreset({ server, client: preset.client })).toEqual([
      'priority levels: server has 2, client batcher expects 3',
      "tenant 'interactive' (priority 1): the server's queue for this level is unbounded",
      "tenant 'interactive' (priority 1): the server keeps a request queued up to forever, past the client's 50 ms deadline",
      "tenant 'standard' (priority 2): the server has no priority_queue_policy for this level",
      "tenant 'batch' (priority 3): the server has priority levels 1–2",
      "client batcher queues up to 672 items, more than the server's queues hold (512): the excess is rejected by Triton after waiting",
      'max batch size: client batcher sends up to 64 rows, server takes 8',
    ]);
  });
});
