import { ErrorCode, InfergateError } from '@infergate/core';
import type { RouteTarget } from './route-engine.js';

// What the candidates of one call can do right now: take it, take it once their cool-down ends,
// or nothing (and then which error says so). Pure functions over the targets' breakers and
// cool-downs, used by the route engine between passes.

/** A target whose context window is larger than `minContext` (after a context-length failure). */
export function fits(target: RouteTarget, minContext: number | undefined): boolean {
  return minContext === undefined || (target.contextWindow ?? 0) > minContext;
}

/** A candidate that has not failed this call, fits, and whose breaker is not open. */
export function canTake<T extends RouteTarget>(
  target: T,
  failed: ReadonlySet<T>,
  minContext: number | undefined,
): boolean {
  return !failed.has(target) && fits(target, minContext) && target.breaker.state.kind !== 'open';
}

/** The target's connection was lost and its redial has not answered yet (target-ejection.ts). */
export function connectionLost(target: RouteTarget, now: number): boolean {
  return target.ejection?.lost(now) === true;
}

/**
 * Whether this pass should skip candidates whose connection was just lost: only when one of them
 * is, and another candidate that has not failed this call and is not lost can take the call (a
 * lost target is still better than none). The candidates come without the call's excluded targets.
 */
export function avoidLost<T extends RouteTarget>(
  candidates: readonly T[],
  failed: ReadonlySet<T>,
  minContext: number | undefined,
  now: number,
): boolean {
  // Most passes: no target lost, one cheap look at each (a plain loop: no closure per call).
  let anyLost = false;
  for (const target of candidates) {
    if (connectionLost(target, now)) {
      anyLost = true;
      break;
    }
  }
  if (!anyLost) return false;
  return candidates.some((target) => !connectionLost(target, now) && canTake(target, failed, minContext));
}

/**
 * When the earliest cooling candidate that could take the call has room again, and how widely to
 * spread the waiters over it (so a surge of waiting calls does not arrive at one instant).
 */
export function roomAt<T extends RouteTarget>(
  candidates: readonly T[],
  failed: ReadonlySet<T>,
  minContext: number | undefined,
): { at: number; spreadMs: number } | undefined {
  const now = Date.now();
  let best: { at: number; spreadMs: number } | undefined;
  for (const target of candidates) {
    if (!canTake(target, failed, minContext) || !target.cooling.active(now)) continue;
    if (best === undefined || target.cooling.until < best.at)
      best = { at: target.cooling.until, spreadMs: target.cooling.lengthMs };
  }
  return best;
}

export function leastRecentlyFailed<T extends RouteTarget>(
  candidates: readonly T[],
  minContext: number | undefined,
): T | undefined {
  let best: T | undefined;
  for (const target of candidates) {
    if (!fits(target, minContext)) continue;
    const failedAt = target.breaker.lastFailureAt ?? Number.NEGATIVE_INFINITY;
    if (best === undefined || failedAt < (best.breaker.lastFailureAt ?? Number.NEGATIVE_INFINITY))
      best = target;
  }
  return best;
}

/** Milliseconds until some candidate can be tried again (0 if one can now). */
export function availableInMs(candidates: readonly RouteTarget[]): number {
  const now = Date.now();
  let earliest = Number.POSITIVE_INFINITY;
  for (const target of candidates) {
    const cooling = Math.max(0, target.cooling.until - now);
    const state = target.breaker.state;
    const open = state.kind === 'open' ? Math.max(0, state.halfOpenAt - now) : 0;
    earliest = Math.min(earliest, Math.max(cooling, open));
  }
  return earliest;
}

export function unavailableError(candidates: readonly RouteTarget[]): InfergateError {
  const anyBreaker = candidates.some((target) => target.breaker.state.kind !== 'closed');
  const retryAfterMs = Math.ceil(availableInMs(candidates));
  const names = candidates.map((target) => target.name).join(', ');
  if (anyBreaker) {
    return new InfergateError(ErrorCode.BreakerOpen, `every target's breaker is open (${names})`, {
      retryAfterMs,
      details: { targets: candidates.map((target) => target.name) },
    });
  }
  return new InfergateError(
    ErrorCode.ResourceExhausted,
    `every target is cooling down after backpressure (${names})`,
    {
      retryAfterMs,
      details: { targets: candidates.map((target) => target.name) },
    },
  );
}
