import type { ObservableResult } from '@opentelemetry/api';
import type { ModelOptions } from './client.js';
import { InfergateError } from './errors.js';
import { loadZod } from './internal/lazy-modules.js';
import { clearLongTimer, setLongInterval } from './internal/long-timer.js';
import { lazyInstruments } from './lazy-instruments.js';
import { parseOptions } from './parse-options.js';
import type { ModelStatistics } from './statistics.js';
import { VERSION } from './version.js';

export interface StatisticsPollerOptions {
  /** Where statistics are read: a TritonClient (anything with `modelStatistics`). */
  client: { modelStatistics(model?: string, options?: ModelOptions): Promise<ModelStatistics[]> };
  /** Models to read, one statistics RPC each. @default every model, in one RPC */
  models?: readonly string[];
  /** Time between polls in ms; at least 1000, so the statistics RPCs stay a small, bounded load. @default 15000 */
  intervalMs?: number;
  /** Deadline of each statistics RPC in ms. @default 5000 */
  timeoutMs?: number;
}

/** Reads Triton's statistics on a timer and reports them as OpenTelemetry metrics. */
export interface StatisticsPoller {
  /** Reads now (also what the timer does). Never rejects: a failure is kept in `lastError`. */
  poll(): Promise<void>;
  /** The last poll's failure, undefined after a successful one. */
  readonly lastError: InfergateError | undefined;
  /** Stops the timer and the metrics. Idempotent. */
  close(): void;
}

const live = new Set<{ snapshot: readonly ModelStatistics[] }>();

function each(result: ObservableResult, read: (stats: ModelStatistics) => number): void {
  for (const poller of live)
    for (const stats of poller.snapshot)
      result.observe(read(stats), {
        'infergate.model': stats.name,
        'infergate.model.version': stats.version,
      });
}

const instruments = lazyInstruments('@infergate/core', VERSION, (meter) => {
  const seconds = (ns: bigint) => Number(ns) / 1e9;
  const counter = (
    name: string,
    description: string,
    unit: string,
    read: (stats: ModelStatistics) => number,
  ) => meter.createObservableCounter(name, { description, unit }).addCallback((result) => each(result, read));
  counter(
    'infergate.triton.queue.duration',
    'Time requests waited in Triton’s scheduler queue (cumulative)',
    's',
    (stats) => seconds(stats.inference.queue.ns),
  );
  counter(
    'infergate.triton.compute.duration',
    'Time Triton spent computing inferences: input, infer and output (cumulative)',
    's',
    (stats) =>
      seconds(
        stats.inference.computeInput.ns + stats.inference.computeInfer.ns + stats.inference.computeOutput.ns,
      ),
  );
  counter(
    'infergate.triton.inferences',
    'Rows Triton inferred (a batch of 8 counts 8)',
    '{inference}',
    (stats) => stats.inferenceCount,
  );
  counter(
    'infergate.triton.executions',
    'Model executions (a batch of 8 counts 1)',
    '{execution}',
    (stats) => stats.executionCount,
  );
  return true;
});

let schema: ReturnType<typeof buildSchema> | undefined;

function buildSchema() {
  const z = loadZod();
  return z.strictObject({
    client: z.custom<StatisticsPollerOptions['client']>(
      (value) => typeof (value as { modelStatistics?: unknown } | undefined)?.modelStatistics === 'function',
      'client must have modelStatistics()',
    ),
    models: z.array(z.string().min(1)).optional(),
    intervalMs: z.number().int().min(1000).default(15_000),
    timeoutMs: z.number().int().positive().default(5_000),
  });
}

/**
 * Opt-in: polls Triton's statistics extension and reports the server side of inference as
 * observable counters — `infergate.triton.queue.duration` and `infergate.triton.compute.duration`
 * (seconds, cumulative) and the inference and execution counts, by `infergate.model` and
 * `infergate.model.version`. One poll at a time, at most one every `intervalMs` (≥ 1 s).
 */
export function createStatisticsPoller(options: StatisticsPollerOptions): StatisticsPoller {
  schema ??= buildSchema();
  const { client, models, intervalMs, timeoutMs } = parseOptions(
    schema,
    options,
    'statistics poller options',
  );
  const state = { snapshot: [] as readonly ModelStatistics[] };
  let lastError: InfergateError | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  const read = async () => {
    const lists = await Promise.all(
      (models ?? ['']).map((model) => client.modelStatistics(model, { timeoutMs })),
    );
    return lists.flat();
  };
  const poll = () => {
    // A poll still running (a slow server) is joined, never doubled.
    running ??= read()
      .then(
        (snapshot) => {
          state.snapshot = snapshot;
          lastError = undefined;
        },
        (error: unknown) => {
          lastError = InfergateError.from(error);
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  live.add(state);
  instruments();
  // intervalMs has no upper bound: over 2^31 − 1 ms a plain interval would poll every millisecond.
  const timer = setLongInterval(() => void poll(), intervalMs);
  // The poller never keeps a process alive on its own.
  timer?.unref?.();
  return {
    poll,
    get lastError() {
      return lastError;
    },
    close() {
      if (closed) return;
      closed = true;
      clearLongTimer(timer);
      live.delete(state);
    },
  };
}
