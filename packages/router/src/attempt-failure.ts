import { abortError, type CallScope, InfergateError } from '@infergate/core';
import { canTake } from './candidate-state.js';
import { classifyError, type ErrorClass } from './classify.js';
import type { AttemptHandle, RouteTarget } from './route-target.js';

// What a failed attempt means for the rest of its call: its typed error and class, whether the call
// ends there, which targets it avoids from then on and how large a context window it now needs.
// Pure functions, shared by the routing loop and the synchronous first attempt (route-engine.ts).

/** A failed attempt: its typed error and class (already reported to the target's breaker). */
export interface AttemptFailure {
  error: InfergateError;
  errorClass: ErrorClass;
}

/** The typed error and its class for something an attempt threw. */
export function classifyAttempt<T>(handle: AttemptHandle<T>, thrown: unknown): AttemptFailure {
  const { callScope, scope } = handle;
  const callSignal = callScope.signal;
  const callOver =
    callSignal?.aborted === true || (callScope.deadline !== undefined && Date.now() >= callScope.deadline);
  if (callOver) {
    const error = callSignal?.aborted === true ? abortError(callSignal) : InfergateError.from(thrown);
    return { error, errorClass: 'cancelled' };
  }
  // The attempt's own timeout (or a stream consumer leaving) aborted it: that reason, typed.
  const own = scope.signal !== undefined && scope.signal !== callSignal && scope.signal.aborted;
  const error = own ? abortError(scope.signal as AbortSignal) : InfergateError.from(thrown);
  return { error, errorClass: classifyError(error) };
}

/**
 * The attempt timeout is there to move a call on to another target. A target that has not failed
 * this call, tried after another did, with no other candidate left that could take the call, has
 * nowhere to move it to: it gets the rest of the call's deadline (only when the call has one).
 * Cutting it short would fail calls a healthy fallback is still serving — a whole failover wave
 * queued on it at once — and eject the one target left for queueing them.
 */
export function lastResort<T extends RouteTarget>(
  target: T,
  candidates: readonly T[],
  failed: ReadonlySet<T>,
  minContext: number | undefined,
  callScope: CallScope,
): boolean {
  if (callScope.deadline === undefined || failed.has(target)) return false;
  return !candidates.some((other) => other !== target && canTake(other, failed, minContext));
}

/** A failure of this class ends the call: no other target is tried (nor any, for a pinned call). */
export function endsCall(errorClass: ErrorClass, pinned: RouteTarget | undefined): boolean {
  return errorClass === 'cancelled' || errorClass === 'reject' || pinned !== undefined;
}

/**
 * The call's failed targets after `target` failed with `errorClass`: a failed (or too-late) target
 * is not tried again for this call while another candidate can take it (a too-late target would only
 * refuse again, sooner still).
 */
export function failedAfter<T>(
  failed: Set<T> | undefined,
  target: T,
  errorClass: ErrorClass,
): Set<T> | undefined {
  if (errorClass !== 'failure' && errorClass !== 'too-late') return failed;
  const set = failed ?? new Set<T>();
  set.add(target);
  return set;
}

/** The call's least context window after `target` answered that the input is too long for it. */
export function contextAfter(
  minContext: number | undefined,
  target: RouteTarget,
  errorClass: ErrorClass,
): number | undefined {
  return errorClass === 'context-length' ? Math.max(minContext ?? 0, target.contextWindow ?? 0) : minContext;
}
