import { ErrorCode, InfergateError } from '@infergate/core';
import type { ModelConfig } from '@infergate/core/proto';
import type { MultiTenantClientSettings } from './multi-tenant-preset.js';

export interface CheckPresetOptions {
  /** Throw one INVALID_ARGUMENT listing the problems instead of returning them. @default false */
  throwOnProblem?: boolean;
}

/**
 * Checks a server configuration (generated, edited by hand, or read back from a live Triton with
 * `modelConfig()`) against the client settings that will call it. Returns what does not match.
 */
export function checkMultiTenantPreset(
  preset: { server: ModelConfig; client: MultiTenantClientSettings },
  options: CheckPresetOptions = {},
): string[] {
  const { server, client } = preset;
  const problems: string[] = [];
  const batching =
    server.schedulingChoice.case === 'dynamicBatching' ? server.schedulingChoice.value : undefined;
  if (batching === undefined) {
    problems.push('server: dynamic_batching is not set, so Triton ignores the priorities the client sends');
  } else {
    const levels = Number(batching.priorityLevels);
    if (levels !== client.batcher.priorityLevels) {
      problems.push(
        `priority levels: server has ${levels}, client batcher expects ${client.batcher.priorityLevels}`,
      );
    }
    const serverDelayMs = Number(batching.maxQueueDelayMicroseconds) / 1000;
    for (const settings of Object.values(client.tenants)) {
      const policy = batching.priorityQueuePolicy[settings.priority];
      const at = `tenant '${settings.tenant}' (priority ${settings.priority})`;
      if (settings.priority < 1 || settings.priority > levels) {
        problems.push(`${at}: the server has priority levels 1–${levels}`);
        continue;
      }
      if (policy === undefined) {
        problems.push(`${at}: the server has no priority_queue_policy for this level`);
        continue;
      }
      if (policy.maxQueueSize === 0) problems.push(`${at}: the server's queue for this level is unbounded`);
      const timeoutMs = Number(policy.defaultTimeoutMicroseconds) / 1000;
      if (timeoutMs === 0 || timeoutMs > settings.timeoutMs) {
        problems.push(
          `${at}: the server keeps a request queued up to ${timeoutMs === 0 ? 'forever' : `${timeoutMs} ms`}, past the client's ${settings.timeoutMs} ms deadline`,
        );
      }
      if (client.batcher.maxQueueDelayMs + serverDelayMs >= settings.timeoutMs) {
        problems.push(
          `${at}: batching delays (client ${client.batcher.maxQueueDelayMs} ms + server ${serverDelayMs} ms) use up the ${settings.timeoutMs} ms deadline`,
        );
      }
    }
    const serverQueues = Object.values(batching.priorityQueuePolicy).reduce(
      (sum, policy) => sum + policy.maxQueueSize,
      0,
    );
    if (client.batcher.maxQueueSize > serverQueues) {
      problems.push(
        `client batcher queues up to ${client.batcher.maxQueueSize} items, more than the server's queues hold (${serverQueues}): the excess is rejected by Triton after waiting`,
      );
    }
  }
  if (server.maxBatchSize < client.batcher.maxBatchSize) {
    problems.push(
      `max batch size: client batcher sends up to ${client.batcher.maxBatchSize} rows, server takes ${server.maxBatchSize}`,
    );
  }
  const weighted = Object.keys(client.batcher.tenants).sort().join(',');
  const called = Object.keys(client.tenants).sort().join(',');
  if (weighted !== called)
    problems.push(`tenants: batcher weights name [${weighted}], call settings name [${called}]`);
  const tightest = Math.min(...Object.values(client.tenants).map((tenant) => tenant.timeoutMs));
  if (client.router.retry.maxRetries > 0 && client.router.retry.maxDelayMs >= tightest) {
    problems.push(
      `router: a retry may wait ${client.router.retry.maxDelayMs} ms, the whole ${tightest} ms of the tightest deadline`,
    );
  }
  if (options.throwOnProblem === true && problems.length > 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `multi-tenant preset: server and client do not match:\n  - ${problems.join('\n  - ')}`,
    );
  }
  return problems;
}
