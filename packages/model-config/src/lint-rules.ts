import {
  type ModelConfig,
  type ModelDynamicBatching,
  ModelInstanceGroup_Kind,
  type ModelQueuePolicy,
} from '@infergate/core/proto';
import { modelConfigProblems } from './validate-model-config.js';

export type LintSeverity = 'error' | 'warning';

/** One thing a rule found: where (a path in the config), and what to change. */
export interface LintFinding {
  rule: string;
  severity: LintSeverity;
  path: string;
  message: string;
}

/** What the deployment around the model is: rules that need a fact skip when it is not given. */
export interface LintContext {
  /** Longest a request may take end to end, in ms. */
  latencyBudgetMs?: number | undefined;
  /** GPUs the server has. */
  gpus?: number | undefined;
  /** Whether the client calls the model on the streaming RPC. */
  streamingClient?: boolean | undefined;
  /** Most instances of this model one GPU may hold (its memory, its share of the GPU). */
  maxInstancesPerGpu?: number | undefined;
}

export interface LintRule {
  id: string;
  severity: LintSeverity;
  /** What the rule checks, one line. */
  summary: string;
  check(config: ModelConfig, context: LintContext): Omit<LintFinding, 'rule' | 'severity'>[];
}

type Found = Omit<LintFinding, 'rule' | 'severity'>;

function dynamicBatching(config: ModelConfig): ModelDynamicBatching | undefined {
  return config.schedulingChoice.case === 'dynamicBatching' ? config.schedulingChoice.value : undefined;
}

/** Every queue the dynamic batcher keeps, by name, with the policy that governs it. */
function queues(
  batching: ModelDynamicBatching,
): { name: string; path: string; policy: ModelQueuePolicy | undefined }[] {
  const levels = Number(batching.priorityLevels);
  if (levels === 0) {
    return [
      {
        name: 'the queue',
        path: 'dynamic_batching.default_queue_policy',
        policy: batching.defaultQueuePolicy,
      },
    ];
  }
  return Array.from({ length: levels }, (_, index) => {
    const level = index + 1;
    const own = batching.priorityQueuePolicy[level];
    return own === undefined
      ? {
          name: `the priority ${level} queue`,
          path: 'dynamic_batching.default_queue_policy',
          policy: batching.defaultQueuePolicy,
        }
      : {
          name: `the priority ${level} queue`,
          path: `dynamic_batching.priority_queue_policy[${level}]`,
          policy: own,
        };
  });
}

const us = (microseconds: bigint | number) => `${Number(microseconds) / 1000} ms`;

export const LINT_RULES: readonly LintRule[] = [
  {
    id: 'invalid-config',
    severity: 'error',
    summary: 'Triton would refuse to load the configuration',
    check: (config) =>
      modelConfigProblems(config).map((problem) => ({ path: problem.split(':')[0] ?? '', message: problem })),
  },
  {
    id: 'unbounded-queue',
    severity: 'error',
    summary:
      'dynamic batching without max_queue_size: the queue grows until latency spikes and memory runs out',
    check(config) {
      const batching = dynamicBatching(config);
      if (batching === undefined) return [];
      const found = new Map<string, Found>();
      for (const queue of queues(batching)) {
        if ((queue.policy?.maxQueueSize ?? 0) > 0) continue;
        const previous = found.get(queue.path);
        const names =
          previous === undefined ? queue.name : `${previous.message.split(' has no')[0]}, ${queue.name}`;
        found.set(queue.path, {
          path: `${queue.path}.max_queue_size`,
          message: `${names} has no max_queue_size, so it is unbounded: under overload requests pile up, latency grows without limit and the server runs out of memory. Set ${queue.path} { max_queue_size: N } (a few batches' worth, e.g. ${Math.max(1, config.maxBatchSize) * 4}) so excess requests are rejected at once.`,
        });
      }
      return [...found.values()];
    },
  },
  {
    id: 'queue-delay-over-budget',
    severity: 'error',
    summary: 'max_queue_delay_microseconds above the latency budget',
    check(config, { latencyBudgetMs }) {
      if (latencyBudgetMs === undefined) return [];
      const budget = BigInt(Math.round(latencyBudgetMs * 1000));
      const delays: [string, bigint][] = [];
      const batching = dynamicBatching(config);
      if (batching !== undefined)
        delays.push(['dynamic_batching.max_queue_delay_microseconds', batching.maxQueueDelayMicroseconds]);
      const scheduling = config.schedulingChoice;
      if (scheduling.case === 'sequenceBatching' && scheduling.value.strategyChoice.case === 'oldest') {
        delays.push([
          'sequence_batching.oldest.max_queue_delay_microseconds',
          scheduling.value.strategyChoice.value.maxQueueDelayMicroseconds,
        ]);
      }
      return delays
        .filter(([, delay]) => delay > budget)
        .map(([path, delay]) => ({
          path,
          message: `${path} is ${us(delay)}, above the ${latencyBudgetMs} ms latency budget: a request may wait longer than the budget before it even runs. Lower it well under the budget (e.g. ${us(budget / 4n)}).`,
        }));
    },
  },
  {
    id: 'preferred-batch-over-max',
    severity: 'error',
    summary: 'a preferred batch size above max_batch_size',
    check(config) {
      const sizes: [string, number][] = [];
      for (const size of dynamicBatching(config)?.preferredBatchSize ?? [])
        sizes.push(['dynamic_batching', size]);
      const scheduling = config.schedulingChoice;
      if (scheduling.case === 'sequenceBatching' && scheduling.value.strategyChoice.case === 'oldest') {
        for (const size of scheduling.value.strategyChoice.value.preferredBatchSize)
          sizes.push(['sequence_batching.oldest', size]);
      }
      if (config.maxBatchSize === 0) return [];
      return sizes
        .filter(([, size]) => size > config.maxBatchSize)
        .map(([where, size]) => ({
          path: `${where}.preferred_batch_size`,
          message: `${where}.preferred_batch_size ${size} is above max_batch_size ${config.maxBatchSize}: Triton never forms that batch. Use sizes up to ${config.maxBatchSize}, or raise max_batch_size.`,
        }));
    },
  },
  {
    id: 'priority-levels-without-policies',
    severity: 'warning',
    summary: 'priority levels without a per-priority queue policy',
    check(config) {
      const batching = dynamicBatching(config);
      if (batching === undefined || batching.priorityLevels === 0n) return [];
      const missing = Array.from({ length: Number(batching.priorityLevels) }, (_, index) => index + 1).filter(
        (level) => batching.priorityQueuePolicy[level] === undefined,
      );
      if (missing.length === 0) return [];
      return [
        {
          path: 'dynamic_batching.priority_queue_policy',
          message: `priority level${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ha${missing.length > 1 ? 've' : 's'} no priority_queue_policy, so every level shares default_queue_policy's size and timeout and a flood of low-priority requests can fill it. Add priority_queue_policy { key: ${missing[0]} value { max_queue_size: … default_timeout_microseconds: … } } for each level.`,
        },
      ];
    },
  },
  {
    id: 'decoupled-without-streaming',
    severity: 'error',
    summary: 'a decoupled model called without a streaming client',
    check(config, { streamingClient }) {
      if (config.modelTransactionPolicy?.decoupled !== true || streamingClient !== false) return [];
      return [
        {
          path: 'model_transaction_policy.decoupled',
          message:
            'the model is decoupled: Triton answers it only on the streaming RPC (ModelStreamInfer), so a plain infer() call fails. Call it with client.stream() (a StreamSession), or set decoupled: false if the model sends exactly one response per request.',
        },
      ];
    },
  },
  {
    id: 'instances-over-gpus',
    severity: 'error',
    summary: 'instance groups on GPUs the server does not have, or more instances per GPU than declared',
    check(config, { gpus, maxInstancesPerGpu }) {
      if (gpus === undefined) return [];
      const found: Found[] = [];
      const perGpu = new Map<number, number>();
      config.instanceGroup.forEach((group, index) => {
        if (group.kind !== ModelInstanceGroup_Kind.GPU && group.gpus.length === 0) return;
        const path = `instance_group[${index}]`;
        const count = Math.max(group.count, 1);
        const outside = group.gpus.filter((gpu) => gpu >= gpus);
        if (outside.length > 0) {
          found.push({
            path: `${path}.gpus`,
            message: `${path} places instances on GPU ${outside.join(', ')}, but the server has ${gpus === 1 ? '1 GPU (index 0)' : `${gpus} GPUs (indices 0–${gpus - 1})`}: the model fails to load. List GPUs that exist.`,
          });
        } else if (gpus === 0) {
          found.push({
            path: `${path}.kind`,
            message: `${path} asks for GPU instances (count ${count}) on a server with no GPU: the model fails to load. Use kind: KIND_CPU or deploy on a GPU server.`,
          });
        }
        // Triton places `count` instances on every GPU listed, or on every GPU when none is listed.
        const targets = group.gpus.length > 0 ? group.gpus : Array.from({ length: gpus }, (_, gpu) => gpu);
        for (const gpu of targets) perGpu.set(gpu, (perGpu.get(gpu) ?? 0) + count);
      });
      if (maxInstancesPerGpu !== undefined) {
        for (const [gpu, instances] of [...perGpu].sort(([a], [b]) => a - b)) {
          if (instances <= maxInstancesPerGpu) continue;
          found.push({
            path: 'instance_group',
            message: `GPU ${gpu} gets ${instances} instances of this model (count is per listed GPU), more than the ${maxInstancesPerGpu} it holds: loading runs out of GPU memory or the instances starve each other. Lower count, or spread the groups over more GPUs.`,
          });
        }
      }
      return found;
    },
  },
  {
    id: 'sequence-without-idle-timeout',
    severity: 'warning',
    summary: 'a sequence batcher without max_sequence_idle_microseconds',
    check(config) {
      const scheduling = config.schedulingChoice;
      if (scheduling.case !== 'sequenceBatching' || scheduling.value.maxSequenceIdleMicroseconds !== 0n)
        return [];
      return [
        {
          path: 'sequence_batching.max_sequence_idle_microseconds',
          message:
            "sequence_batching has no max_sequence_idle_microseconds, so Triton's 1 s default applies: a sequence idle longer than that loses its slot and its next request fails, while an abandoned one holds a slot a full second. Set it to the longest gap between requests of one sequence.",
        },
      ];
    },
  },
  {
    id: 'batching-without-batch-dimension',
    severity: 'warning',
    summary: 'dynamic batching on a model with max_batch_size 0',
    check(config) {
      if (dynamicBatching(config) === undefined || config.maxBatchSize !== 0) return [];
      return [
        {
          path: 'max_batch_size',
          message:
            'dynamic_batching is set but max_batch_size is 0, so Triton cannot batch requests: it only queues them. Set max_batch_size to the largest batch the model takes, or remove dynamic_batching.',
        },
      ];
    },
  },
  {
    id: 'queue-without-timeout',
    severity: 'warning',
    summary: 'a bounded latency budget but queues whose requests never time out',
    check(config, { latencyBudgetMs }) {
      const batching = dynamicBatching(config);
      if (batching === undefined || latencyBudgetMs === undefined) return [];
      const paths = new Set(
        queues(batching)
          .filter((queue) => (queue.policy?.defaultTimeoutMicroseconds ?? 0n) === 0n)
          .map((queue) => queue.path),
      );
      return [...paths].map((path) => ({
        path: `${path}.default_timeout_microseconds`,
        message: `${path} has no default_timeout_microseconds: a queued request waits however long it takes, past the ${latencyBudgetMs} ms budget, and the server still runs it after the client gave up. Set default_timeout_microseconds (at most ${latencyBudgetMs * 1000}) with timeout_action: REJECT.`,
      }));
    },
  },
  {
    id: 'response-cache-unsupported',
    severity: 'warning',
    summary: 'the response cache where Triton does not use it (decoupled, sequence batching, ensembles)',
    check(config) {
      if (config.responseCache?.enable !== true) return [];
      const where =
        config.modelTransactionPolicy?.decoupled === true
          ? 'a decoupled model'
          : config.schedulingChoice.case === 'sequenceBatching'
            ? 'a model with sequence batching'
            : config.schedulingChoice.case === 'ensembleScheduling' || config.platform === 'ensemble'
              ? 'the top level of an ensemble (enable it on the composing models instead)'
              : undefined;
      if (where === undefined) return [];
      return [
        {
          path: 'response_cache.enable',
          message: `response_cache is enabled on ${where}; Triton's response cache does not serve it, so nothing is cached. Remove response_cache here.`,
        },
      ];
    },
  },
];
