import { abortError, ErrorCode, InfergateError } from '@infergate/core';

/** A child AbortSignal for one attempt (or one call): it follows its parent and has its own timeout. */
export interface ScopedSignal {
  /** Undefined only for a pass-through scope whose parent is undefined. */
  readonly signal: AbortSignal | undefined;
  /** When the timeout fires (epoch ms); undefined without a timeout. */
  readonly deadline: number | undefined;
  /** True when this scope's own timeout aborted it (not the parent). */
  timedOut(): boolean;
  /** Stops the timeout (the parent link stays until `dispose`). */
  clearTimeout(): void;
  /** Aborts this scope only (e.g. the consumer left a stream). */
  abort(reason: unknown): void;
  dispose(): void;
}

const noop = () => {};

/** The scope of a call with neither a signal nor a deadline: shared, it holds nothing. */
export const NO_SCOPE: ScopedSignal = {
  signal: undefined,
  deadline: undefined,
  timedOut: () => false,
  clearTimeout: noop,
  abort: noop,
  dispose: noop,
};

/**
 * Creates the child signal. Without a timeout and unless `own` is set, the scope passes the parent
 * through (no controller, no listener): the hot path of a call without deadlines allocates nothing.
 * Aborting it never touches the parent or any sibling, which is why it exists instead of opossum's shared
 * AbortController.
 */
export function scopedSignal(
  parent: AbortSignal | undefined,
  timeoutMs: number | undefined,
  what = 'the attempt',
  own = false,
): ScopedSignal {
  if (timeoutMs === undefined && !own) {
    if (parent === undefined) return NO_SCOPE;
    return {
      signal: parent,
      deadline: undefined,
      timedOut: () => false,
      clearTimeout: noop,
      abort: noop,
      dispose: noop,
    };
  }
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timeoutError: InfergateError | undefined;
  const onParentAbort = () => {
    if (parent !== undefined) controller.abort(abortError(parent));
  };
  if (parent?.aborted) controller.abort(abortError(parent));
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(() => {
      timeoutError = new InfergateError(
        ErrorCode.DeadlineExceeded,
        `${what} timed out after ${timeoutMs} ms`,
      );
      controller.abort(timeoutError);
    }, timeoutMs);
  }
  return {
    signal: controller.signal,
    deadline,
    timedOut: () => timeoutError !== undefined && controller.signal.reason === timeoutError,
    clearTimeout: () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
    abort: (reason) => controller.abort(reason),
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
