import { abortError, ErrorCode, InfergateError } from './errors.js';
import { clearLongTimer, type LongTimer, setLongTimeout } from './internal/long-timer.js';

/**
 * The lifetime of one call (or one attempt of it): a child AbortSignal that follows the caller's
 * signal and has its own deadline. Every layer (router, batcher, llm, cost) builds its waits on
 * this one helper, so an abort or a deadline means the same thing everywhere.
 */
export interface CallScope {
  /** Aborts with a typed reason (CANCELLED or DEADLINE_EXCEEDED); undefined only for a pass-through scope without parent. */
  readonly signal: AbortSignal | undefined;
  /** When the deadline fires (epoch ms); undefined without a deadline. */
  readonly deadline: number | undefined;
  /** Milliseconds left before the deadline (never below 0); undefined without a deadline. */
  remainingMs(): number | undefined;
  /** True when this scope's own deadline aborted it (not the parent, not `abort`). */
  timedOut(): boolean;
  /** Aborts this scope only (a consumer left a stream, a hedge lost): the parent is untouched. */
  abort(reason?: unknown): void;
  /**
   * Settles with `work`, or rejects with the scope's typed reason as soon as the scope aborts — so
   * a layer below that ignores its signal cannot hold the caller past the deadline.
   */
  race<T>(work: Promise<T>): Promise<T>;
  /** Stops the timer and detaches from the parent. Idempotent. */
  dispose(): void;
}

export interface CallScopeOptions {
  /** The caller's signal; aborting it aborts the scope. */
  signal?: AbortSignal | undefined;
  /**
   * Deadline in ms from now; must be positive. `Infinity` means no deadline (as if absent); a finite
   * value of any size is a deadline that fires when due, beyond setTimeout's 2^31 − 1 ms too.
   * @default none
   */
  timeoutMs?: number | undefined;
  /** Names what timed out in the DEADLINE_EXCEEDED message. @default "the call" */
  what?: string;
  /**
   * Give the scope its own AbortController even without a deadline, so `abort()` works. Without it
   * (and without a deadline) the scope passes the parent's signal through and allocates nothing.
   * @default false
   */
  own?: boolean;
}

const noop = () => {};
const passRace = <T>(work: Promise<T>) => work;

/** The scope of a call with neither a signal nor a deadline: shared, it holds nothing. */
export const NO_SCOPE: CallScope = {
  signal: undefined,
  deadline: undefined,
  remainingMs: () => undefined,
  timedOut: () => false,
  abort: noop,
  race: passRace,
  dispose: noop,
};

/**
 * Checks a per-call `timeoutMs`: INVALID_ARGUMENT unless it is absent or a positive number.
 * `Infinity` passes: it means no deadline.
 */
export function checkTimeoutMs(timeoutMs: number | undefined, what = 'timeoutMs'): void {
  if (timeoutMs === undefined) return;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || Number.isNaN(timeoutMs)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${what} must be a positive number, got ${timeoutMs}`,
    );
  }
}

/**
 * Settles with `work`, or rejects with the signal's typed reason (CANCELLED or DEADLINE_EXCEEDED) as
 * soon as `signal` aborts, without waiting for `work`. Work already sent cannot be recalled: when it
 * still succeeds after the abort, `onLateSuccess` gets its value to undo it (best effort: what it
 * throws or rejects with is dropped). Without a signal, `work` itself is returned.
 */
export function raceSignal<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  onLateSuccess?: (value: T) => unknown,
): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    afterAbort(work, onLateSuccess);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      afterAbort(work, onLateSuccess);
      reject(abortError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** What happens to work the caller stopped waiting for: its failure is dropped, its success undone. */
function afterAbort<T>(work: Promise<T>, onLateSuccess: ((value: T) => unknown) | undefined): void {
  if (onLateSuccess === undefined) {
    work.catch(noop);
    return;
  }
  work.then((value) => {
    try {
      Promise.resolve(onLateSuccess(value)).catch(noop);
    } catch {
      // Undoing is best effort.
    }
  }, noop);
}

/**
 * Creates a call scope. An already-aborted parent gives an already-aborted scope (its reason typed);
 * a bad `timeoutMs` throws INVALID_ARGUMENT.
 */
export function createCallScope(options: CallScopeOptions = {}): CallScope {
  const { signal: parent, what = 'the call', own = false } = options;
  checkTimeoutMs(options.timeoutMs);
  // Infinity: no deadline, so no timer (setTimeout would fire it after 1 ms).
  const timeoutMs = options.timeoutMs === Number.POSITIVE_INFINITY ? undefined : options.timeoutMs;
  if (timeoutMs === undefined && !own) {
    if (parent === undefined) return NO_SCOPE;
    return {
      signal: parent,
      deadline: undefined,
      remainingMs: () => undefined,
      timedOut: () => false,
      abort: noop,
      race: (work) => raceSignal(work, parent),
      dispose: noop,
    };
  }
  const controller = new AbortController();
  const signal = controller.signal;
  let timer: LongTimer | undefined;
  let timeoutError: InfergateError | undefined;
  const onParentAbort = () => {
    if (parent !== undefined) controller.abort(abortError(parent));
  };
  if (parent?.aborted) controller.abort(abortError(parent));
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  if (timeoutMs !== undefined && !signal.aborted) {
    timer = setLongTimeout(() => {
      timer = undefined;
      timeoutError = new InfergateError(
        ErrorCode.DeadlineExceeded,
        `${what} timed out after ${timeoutMs} ms`,
        {
          details: { timeoutMs },
        },
      );
      controller.abort(timeoutError);
    }, timeoutMs);
  }
  const dispose = () => {
    if (timer !== undefined) clearLongTimer(timer);
    timer = undefined;
    parent?.removeEventListener('abort', onParentAbort);
  };
  return {
    signal,
    deadline,
    remainingMs: () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now())),
    timedOut: () => timeoutError !== undefined && signal.reason === timeoutError,
    abort: (reason?: unknown) => {
      if (signal.aborted) return;
      controller.abort(reason ?? new InfergateError(ErrorCode.Cancelled, `${what} was cancelled`));
    },
    race: (work) => raceSignal(work, signal),
    dispose,
  };
}

/**
 * Waits `ms` (any length: beyond setTimeout's 2^31 − 1 ms too; Infinity until the signal aborts),
 * or rejects with the signal's typed reason (CANCELLED / DEADLINE_EXCEEDED) as soon as it aborts.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (!(ms > 0)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearLongTimer(timer);
      if (signal !== undefined) reject(abortError(signal));
    };
    const timer = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
