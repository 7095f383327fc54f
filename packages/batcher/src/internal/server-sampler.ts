import type { GetModelStatistics, MicroBatcherOptions } from '../options.js';
import { batcherErrors } from './batcher-errors.js';
import type { Lane } from './lane.js';

/** The shortest time a statistics read is given. */
export const MIN_READ_TIMEOUT_MS = 1000;

/** `client.modelStatistics()` reduced to the counters the `measure` rule reads. */
export function statisticsOf(client: MicroBatcherOptions['client']): GetModelStatistics | undefined {
  const read = client?.modelStatistics?.bind(client);
  if (read === undefined) return undefined;
  return async (model, version, timeoutMs) => {
    const [stats] = await read(model, version === '' ? { timeoutMs } : { version, timeoutMs });
    if (stats === undefined) throw batcherErrors.noStatistics(model);
    return {
      requests: stats.inference.success.count,
      executions: stats.executionCount,
      queueUs: Number(stats.inference.queue.ns) / 1000,
      computeUs: Number(stats.inference.computeInfer.ns) / 1000,
    };
  };
}

/**
 * The `measure` rule: while batches flow to a model with dynamic batching, reads the server's
 * statistics every `intervalMs` (one read at a time, each bounded by `intervalMs` but at least
 * `MIN_READ_TIMEOUT_MS`, so that a short interval does not make every read time out) and lets the
 * planner judge the queue time since the last read. A failed read leaves the mode as it is and is
 * tried again after the interval. Returns the read in progress, if one was started.
 */
export function sampleServer(
  lane: Lane,
  at: number,
  read: GetModelStatistics,
  intervalMs: number,
): Promise<void> | undefined {
  if (lane.planner.server === undefined || lane.statsPending || at - lane.statsAskedAt < intervalMs) {
    return undefined;
  }
  lane.statsAskedAt = at;
  lane.statsPending = true;
  return read(lane.model, lane.version, Math.max(intervalMs, MIN_READ_TIMEOUT_MS)).then(
    (counters) => {
      lane.statsPending = false;
      const base = lane.statsBase;
      lane.statsBase = counters;
      if (base === undefined) return;
      lane.planner.serverSample({
        requests: counters.requests - base.requests,
        executions: counters.executions - base.executions,
        queueUs: counters.queueUs - base.queueUs,
        computeUs: counters.computeUs - base.computeUs,
      });
    },
    () => {
      lane.statsPending = false;
    },
  );
}
