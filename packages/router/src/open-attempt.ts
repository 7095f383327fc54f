import {
  type CallOptions,
  type CallScope,
  createCallScope,
  ErrorCode,
  InfergateError,
  NO_SCOPE,
} from '@infergate/core';
import { clearLongTimer, type LongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import type { Span } from '@opentelemetry/api';
import type { BreakerPermit } from './breaker.js';
import type { LoadStats } from './load-stats.js';
import type { AttemptHandle, RouteTarget } from './route-target.js';

/**
 * Opens one attempt: its scope (the call's signal, and the attempt's own deadline — for a stream a
 * timer on the first answer only, which `stopTimer()` clears, while the call's deadline bounds the
 * whole stream), its handle, and the options the target is called with. Counts it in flight.
 */
export function openAttempt<T extends RouteTarget>(
  call: CallOptions,
  callScope: CallScope,
  target: T,
  permit: BreakerPermit,
  attempt: number,
  keepOpen: boolean,
  parts: { attemptTimeoutMs: number | undefined; span: Span; load: LoadStats },
): { handle: AttemptHandle<T>; options: CallOptions } {
  const { attemptTimeoutMs, span, load } = parts;
  const remaining = callScope.remainingMs();
  const limit =
    remaining === undefined
      ? attemptTimeoutMs
      : Math.max(1, Math.min(remaining, attemptTimeoutMs ?? remaining));
  // No signal, no deadline, nothing to abort (most calls): the shared empty scope.
  const scope =
    callScope === NO_SCOPE && limit === undefined && !keepOpen
      ? NO_SCOPE
      : createCallScope({
          signal: callScope.signal,
          timeoutMs: keepOpen ? undefined : limit,
          what: 'the attempt',
          own: keepOpen,
        });
  let timer: LongTimer | undefined;
  if (keepOpen && attemptTimeoutMs !== undefined && limit !== undefined) {
    // attemptTimeoutMs has no upper bound.
    timer = setLongTimeout(
      () =>
        scope.abort(
          new InfergateError(ErrorCode.DeadlineExceeded, `the attempt timed out after ${limit} ms`, {
            details: { timeoutMs: limit },
          }),
        ),
      limit,
    );
  }
  load.start();
  const handle = new OpenAttempt(target, attempt, scope, callScope, permit, span, load, timer);
  // The caller's options go through as they are unless the attempt has its own signal or deadline.
  const passOn = keepOpen ? remaining : limit;
  let options: CallOptions = call;
  if ((scope.signal !== undefined && scope.signal !== call.signal) || passOn !== undefined) {
    options = { ...call };
    if (scope.signal !== undefined) options.signal = scope.signal;
    if (passOn !== undefined) options.timeoutMs = passOn;
  }
  return { handle, options };
}

/** One attempt in flight: a plain object per attempt, no closures. */
class OpenAttempt<T> implements AttemptHandle<T> {
  readonly started = performance.now();
  #recorded = false;
  #timer: LongTimer | undefined;

  constructor(
    readonly target: T,
    readonly attempt: number,
    readonly scope: CallScope,
    readonly callScope: CallScope,
    readonly permit: BreakerPermit,
    readonly span: Span,
    readonly load: LoadStats,
    timer: LongTimer | undefined,
  ) {
    this.#timer = timer;
  }

  // Recorded once, at the first answer: a stream's latency is its first chunk's (the queued part).
  stopTimer(answered = true): void {
    if (this.#timer !== undefined) {
      clearLongTimer(this.#timer);
      this.#timer = undefined;
    }
    if (answered && !this.#recorded) {
      const now = performance.now();
      this.load.record(now - this.started, now);
    }
    this.#recorded = true;
  }
}
