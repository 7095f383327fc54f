import { integerOption, usageError } from '../internal/command-line.js';
import type { PerfReport } from './perf-report.js';

/** The batcher's settings from the command line; `undefined` without --client-batching. */
export function batcherOptionsOf(values: {
  'client-batching'?: boolean | undefined;
  'batch-policy'?: string | undefined;
  'max-batch-size'?: string | undefined;
  'max-queue-delay-ms'?: string | undefined;
  'max-in-flight'?: string | undefined;
}): NonNullable<PerfReport['batcher']> | undefined {
  const given = (['batch-policy', 'max-batch-size', 'max-queue-delay-ms', 'max-in-flight'] as const).filter(
    (name) => values[name] !== undefined,
  );
  if (values['client-batching'] !== true) {
    if (given.length > 0) throw usageError(`--${given[0]} needs --client-batching`);
    return undefined;
  }
  const flush = values['batch-policy'] ?? 'adaptive';
  if (flush !== 'adaptive' && flush !== 'fixed') {
    throw usageError(`--batch-policy must be adaptive or fixed, got '${flush}'`);
  }
  const delayText = values['max-queue-delay-ms'];
  const maxQueueDelayMs = delayText === undefined ? 10 : Number(delayText);
  if (!(Number.isFinite(maxQueueDelayMs) && maxQueueDelayMs >= 0)) {
    throw usageError(`--max-queue-delay-ms must be a number ≥ 0, got '${delayText}'`);
  }
  return {
    flush,
    maxBatchSize: integerOption(values['max-batch-size'], 'max-batch-size', 64),
    maxQueueDelayMs,
    maxInFlightBatches: integerOption(values['max-in-flight'], 'max-in-flight', 2),
  };
}
