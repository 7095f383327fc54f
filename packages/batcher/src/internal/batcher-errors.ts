import { ErrorCode, InfergateError } from '@infergate/core';

/**
 * Builds a shedding error without capturing a stack trace. Under overload the batcher refuses tens
 * of thousands of calls a second; the stack of a QUEUE_FULL only ever points into the batcher, and
 * capturing it was most of what a refusal cost (about 15 µs of a 20-frame stack on a loaded machine).
 */
export function shed<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The errors the batcher raises itself (as opposed to those the transport answers). */
export const batcherErrors = {
  closed: () => new InfergateError(ErrorCode.FailedPrecondition, 'the micro-batcher is closed'),
  closedWhileQueued: (model: string) =>
    new InfergateError(ErrorCode.Cancelled, 'the batcher was closed before the call was sent', { model }),
  tooManyRows: (model: string, rows: number, limit: number) =>
    new InfergateError(
      ErrorCode.InvalidArgument,
      `the call has ${rows} rows, more than model '${model}' accepts (max_batch_size ${limit})`,
      { model },
    ),
  queueFull: (model: string, items: number, bytes: number, maxItems: number, maxBytes: number) =>
    shed(
      () =>
        new InfergateError(
          ErrorCode.QueueFull,
          `the batcher queue is full (${items} calls, ${bytes} bytes queued; bounds ${maxItems} calls, ${maxBytes} bytes)`,
          { model },
        ),
    ),
  noStatistics: (model: string) =>
    new InfergateError(ErrorCode.NotFound, `the server reports no statistics for model '${model}'`, {
      model,
    }),
  waitTooLong: (model: string, waitMs: number, maxQueueWaitMs: number) =>
    shed(
      () =>
        new InfergateError(
          ErrorCode.QueueFull,
          `the call could wait ~${waitMs.toFixed(1)} ms for a batch of model '${model}', more than maxQueueWaitMs ${maxQueueWaitMs}`,
          { model },
        ),
    ),
  deadlinePassed: (model: string, timeoutMs: number) =>
    new InfergateError(ErrorCode.DeadlineExceeded, `the call's ${timeoutMs} ms deadline passed`, { model }),
  deadlineTooClose: (model: string, leftMs: number, expectedMs: number) =>
    new InfergateError(
      ErrorCode.DeadlineExceeded,
      `the call's deadline is ${leftMs.toFixed(1)} ms away, less than a batch takes (~${expectedMs.toFixed(1)} ms)`,
      // Refused before anything was sent (with time left): a router reads the reason and does not
      // blame the target.
      { model, details: { reason: 'deadline-too-close', leftMs, expectedMs } },
    ),
};
