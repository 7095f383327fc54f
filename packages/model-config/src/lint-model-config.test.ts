import { readFileSync } from 'node:fs';
import { InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { formatFinding, lintModelConfig } from './lint-model-config.js';
import { LINT_RULES, type LintFinding } from './lint-rules.js';
import type { ModelConfigInit } from './message-init.js';
import { buildModelConfig } from './model-config-builder.js';
import { parseModelConfig } from './model-config-text.js';

const base = {
  name: 'm',
  maxBatchSize: 16,
  input: [{ name: 'x', dataType: 'FP32', dims: [4] }],
  output: [{ name: 'y', dataType: 'FP32', dims: [4] }],
} as const satisfies ModelConfigInit;

/** A configuration every rule accepts, for any context. */
const clean = {
  ...base,
  dynamicBatching: {
    maxQueueDelayMicroseconds: 500,
    defaultQueuePolicy: { maxQueueSize: 64, defaultTimeoutMicroseconds: 50_000 },
  },
  instanceGroup: [{ kind: 'KIND_GPU', count: 2, gpus: [0] }],
} as const satisfies ModelConfigInit;

const lint = (init: ModelConfigInit, options: Parameters<typeof lintModelConfig>[1] = {}) =>
  lintModelConfig(buildModelConfig(init), options);
const rules = (findings: LintFinding[]) => findings.map((finding) => finding.rule);
const full = { latencyBudgetMs: 100, gpus: 1, streamingClient: false };

describe('lintModelConfig', () => {
  it('finds nothing in a bounded, budgeted configuration', () => {
    expect(lint(clean, full)).toEqual([]);
  });

  it('unbounded-queue: dynamic batching without max_queue_size names the queue', () => {
    const findings = lint({ ...base, dynamicBatching: { maxQueueDelayMicroseconds: 100 } });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      rule: 'unbounded-queue',
      severity: 'error',
      path: 'dynamic_batching.default_queue_policy.max_queue_size',
    });
    expect(findings[0]?.message).toMatch(/^the queue has no max_queue_size, so it is unbounded/);
    expect(findings[0]?.message).toContain('max_queue_size: N');
    const priorities = lint({
      ...base,
      dynamicBatching: {
        priorityLevels: 2,
        defaultPriorityLevel: 1,
        priorityQueuePolicy: { 1: { maxQueueSize: 8 } },
      },
    });
    expect(priorities.find((finding) => finding.rule === 'unbounded-queue')?.message).toMatch(
      /^the priority 2 queue has no max_queue_size/,
    );
  });

  it('queue-delay-over-budget: max_queue_delay above the latency budget', () => {
    const init = {
      ...clean,
      dynamicBatching: { ...clean.dynamicBatching, maxQueueDelayMicroseconds: 150_000 },
    };
    expect(rules(lint(init))).toEqual([]);
    const [finding] = lint(init, { latencyBudgetMs: 100 });
    expect(finding).toMatchObject({
      rule: 'queue-delay-over-budget',
      path: 'dynamic_batching.max_queue_delay_microseconds',
    });
    expect(finding?.message).toContain('is 150 ms, above the 100 ms latency budget');
  });

  it('preferred-batch-over-max: preferred sizes above max_batch_size', () => {
    const findings = lint({
      ...clean,
      dynamicBatching: { ...clean.dynamicBatching, preferredBatchSize: [8, 32] },
    });
    expect(rules(findings)).toEqual(['preferred-batch-over-max']);
    expect(findings[0]?.message).toContain('preferred_batch_size 32 is above max_batch_size 16');
  });

  it('priority-levels-without-policies: every level should have its own queue policy', () => {
    const findings = lint({
      ...clean,
      dynamicBatching: {
        ...clean.dynamicBatching,
        priorityLevels: 3,
        defaultPriorityLevel: 3,
        priorityQueuePolicy: { 1: { maxQueueSize: 8 } },
      },
    });
    expect(rules(findings)).toEqual(['priority-levels-without-policies']);
    expect(findings[0]?.message).toContain('priority levels 2, 3 have no priority_queue_policy');
  });

  it('decoupled-without-streaming: a decoupled model and a client that does not stream', () => {
    const decoupled = { ...clean, modelTransactionPolicy: { decoupled: true } } satisfies ModelConfigInit;
    expect(lint(decoupled, { streamingClient: true })).toEqual([]);
    const [finding] = lint(decoupled, { streamingClient: false });
    expect(finding).toMatchObject({ rule: 'decoupled-without-streaming', severity: 'error' });
    expect(finding?.message).toContain('client.stream()');
  });

  it('instances-over-gpus: GPU indices the server does not have, or GPU groups with no GPU', () => {
    const twoGpus = {
      ...clean,
      instanceGroup: [{ kind: 'KIND_GPU', count: 1, gpus: [0, 1] }],
    } satisfies ModelConfigInit;
    expect(lint(twoGpus, { gpus: 2 })).toEqual([]);
    const [finding] = lint(twoGpus, { gpus: 1 });
    expect(finding).toMatchObject({ rule: 'instances-over-gpus', path: 'instance_group[0].gpus' });
    expect(finding?.message).toContain('places instances on GPU 1, but the server has 1 GPU');
    expect(rules(lint({ ...clean, instanceGroup: [{ kind: 'KIND_GPU', count: 3 }] }, { gpus: 0 }))).toEqual([
      'instances-over-gpus',
    ]);
  });

  it('sequence-without-idle-timeout: a sequence batcher on the 1 s default', () => {
    const sequence = { ...base, sequenceBatching: { direct: {} } } satisfies ModelConfigInit;
    expect(rules(lint(sequence))).toEqual(['sequence-without-idle-timeout']);
    expect(lint({ ...base, sequenceBatching: { maxSequenceIdleMicroseconds: 30_000_000 } })).toEqual([]);
  });

  it('batching-without-batch-dimension: dynamic batching with max_batch_size 0', () => {
    expect(rules(lint({ ...clean, maxBatchSize: 0 }))).toEqual(['batching-without-batch-dimension']);
  });

  it('queue-without-timeout: a latency budget but requests that wait forever', () => {
    const init = {
      ...clean,
      dynamicBatching: { defaultQueuePolicy: { maxQueueSize: 64 } },
    } satisfies ModelConfigInit;
    expect(lint(init)).toEqual([]);
    const [finding] = lint(init, { latencyBudgetMs: 100 });
    expect(finding).toMatchObject({
      rule: 'queue-without-timeout',
      path: 'dynamic_batching.default_queue_policy.default_timeout_microseconds',
    });
  });

  it('response-cache-unsupported: decoupled, sequence and ensemble models are not cached', () => {
    expect(lint({ ...clean, responseCache: { enable: true } })).toEqual([]);
    const decoupled = lint({
      ...clean,
      responseCache: { enable: true },
      modelTransactionPolicy: { decoupled: true },
    });
    expect(rules(decoupled)).toEqual(['response-cache-unsupported']);
    expect(decoupled[0]?.message).toContain('on a decoupled model');
  });

  it('invalid-config: what Triton refuses to load is an error too', () => {
    const config = parseModelConfig('name: "m" max_batch_size: 4 input [ { name: "x" dims: [ 4 ] } ]');
    const [finding] = lintModelConfig(config);
    expect(finding).toMatchObject({
      rule: 'invalid-config',
      severity: 'error',
      path: "input[0] 'x'.data_type",
    });
  });

  it('every rule has an id, a summary and a test above; disable turns rules off, unknown ids are refused', () => {
    const ids = LINT_RULES.map((rule) => rule.id);
    expect(new Set(ids).size).toBe(ids.length);
    const tests = readFileSync(import.meta.filename, 'utf8');
    for (const id of ids) expect(tests).toContain(`it('${id}: `);
    const unbounded = buildModelConfig({ ...base, dynamicBatching: {} });
    expect(lintModelConfig(unbounded, { disable: ['unbounded-queue'] })).toEqual([]);
    expect(() => lintModelConfig(unbounded, { disable: ['unbounded-queues'] })).toThrow(InfergateError);
    expect(() => lintModelConfig(unbounded, { disable: ['unbounded-queues'] })).toThrow(
      /unknown rule unbounded-queues/,
    );
  });

  it('orders errors first and formats a finding as one line', () => {
    const findings = lint(
      {
        ...clean,
        dynamicBatching: { ...clean.dynamicBatching, priorityLevels: 2, defaultPriorityLevel: 1 },
        instanceGroup: [{ kind: 'KIND_GPU', gpus: [3] }],
      },
      { gpus: 1 },
    );
    expect(findings.map((finding) => `${finding.severity} ${finding.rule}`)).toEqual([
      'error instances-over-gpus',
      'warning priority-levels-without-policies',
    ]);
    expect(formatFinding(findings[0] as LintFinding, 'models/m/config.pbtxt')).toBe(
      'models/m/config.pbtxt: error instances-over-gpus (instance_group[0].gpus): instance_group[0] places instances on GPU 3, but the server has 1 GPU (index 0): the model fails to load. List GPUs that exist.',
    );
  });
});
