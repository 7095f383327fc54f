import type { CallScope } from '@infergate/core';
import type { Admission, AdmissionCall, Refusal } from './admission.js';
import type { BreakerPermit } from './breaker.js';
import { avoidLost, canTake, connectionLost, fits } from './candidate-state.js';
import type { RoutePlanner } from './route-planner.js';
import type { ExecutePolicy, RouteTarget } from './route-target.js';

/** No target failed this call yet (most calls): nothing allocated. */
export const NO_TARGETS: ReadonlySet<never> = new Set();

/** One pass over the planned candidates: what its checks need, and how far it has got. */
export interface RoutePass<T> {
  readonly candidates: readonly T[];
  readonly budgetMs: number | undefined;
  /** The targets that had failed this call when the pass began (the same set, growing). */
  readonly avoid: ReadonlySet<T> | undefined;
  readonly avoidFailed: boolean;
  readonly skipLost: boolean;
  /** The pass's start: the time for its cooling checks until it has awaited an attempt. */
  readonly now: number;
  /** The index of the next candidate to look at. */
  next: number;
  /** Candidates that got an attempt in this pass. */
  tried: number;
  refused: Refusal | undefined;
  /** The permit of the candidate `pickCandidate` last returned. */
  permit: BreakerPermit | undefined;
}

/** A pass's candidates and checks, computed once at its start. */
export function startPass<T extends RouteTarget>(
  planner: RoutePlanner<T>,
  admission: Admission,
  policy: ExecutePolicy<T>,
  admit: AdmissionCall,
  callScope: CallScope,
  failed: Set<T> | undefined,
  minContext: number | undefined,
  allowLost: boolean,
  now: number,
): RoutePass<T> {
  const { pinned } = policy;
  const candidates = pinned !== undefined ? [pinned] : without(planner.candidates(policy), policy.exclude);
  const budgetMs = admission.budgetMs(admit, callScope);
  const avoid = failed;
  const avoidFailed = avoid !== undefined && candidates.some((target) => canTake(target, avoid, minContext));
  // A target whose connection was just lost (its redial not answered yet) is passed over while
  // another can take the call: the lost connection is the first sign of a crash.
  const skipLost =
    !allowLost && pinned === undefined && avoidLost(candidates, avoid ?? NO_TARGETS, minContext, now);
  return {
    candidates,
    budgetMs,
    avoid,
    avoidFailed,
    skipLost,
    now,
    next: 0,
    tried: 0,
    refused: undefined,
    permit: undefined,
  };
}

/**
 * The pass's next candidate that can take the call, from `pass.next` on, with its breaker permit
 * in `pass.permit` (counted as tried); undefined when none is left. Refusals are kept in the pass.
 */
export function pickCandidate<T extends RouteTarget>(
  pass: RoutePass<T>,
  admission: Admission,
  policy: ExecutePolicy<T>,
  admit: AdmissionCall,
  minContext: number | undefined,
): T | undefined {
  const { pinned } = policy;
  const { candidates, avoid } = pass;
  while (pass.next < candidates.length) {
    const target = candidates[pass.next] as T;
    pass.next += 1;
    if (!fits(target, minContext)) continue;
    if (pass.avoidFailed && avoid?.has(target) === true) continue;
    if (pass.skipLost && connectionLost(target, pass.now)) continue;
    // Until this pass has awaited an attempt, its start is still the time.
    if (pinned === undefined && target.cooling.active(pass.tried === 0 ? pass.now : Date.now())) continue;
    const refusal =
      pinned === undefined
        ? admission.refuse(target, policy.model, admit, pass.budgetMs, policy.costOf)
        : undefined;
    if (refusal !== undefined) {
      pass.refused ??= refusal;
      continue;
    }
    const permit = target.breaker.acquire();
    if (permit === undefined) continue;
    pass.tried += 1;
    pass.permit = permit;
    return target;
  }
  return undefined;
}

/**
 * The candidates less those the call must not use (a hedge's first target): taken out before any
 * pass, so neither the room wait nor `whenAllOpen` can send the call there.
 */
function without<T>(candidates: readonly T[], exclude: ReadonlySet<T> | undefined): readonly T[] {
  if (exclude === undefined || exclude.size === 0) return candidates;
  return candidates.filter((target) => !exclude.has(target));
}
