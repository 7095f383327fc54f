import { Breaker, type ProbeFunction } from './breaker.js';
import type { BreakerSnapshot } from './breaker-state.js';
import { breakerOptionsSchema, type ResolvedRouterOptions } from './config.js';
import { acceptBreakerOptions } from './internal/accept-router-options.js';

/** Builds a target's breaker from the router-wide and the target's own options. */
export function createBreaker(
  name: string,
  options: ResolvedRouterOptions,
  own: Record<string, unknown> | undefined,
  probe?: ProbeFunction,
): Breaker {
  // The record's own entry only: a target named `constructor` or `toString` found Object.prototype's
  // member (and failed as a bad saved state) when the saved states did not name it.
  const saved = options.initialState;
  const initialState =
    saved !== undefined && Object.hasOwn(saved, name) ? (saved[name] as BreakerSnapshot) : undefined;
  // Both parts were validated with the router's options; the schema stays the judge of the merge.
  // The target's own fields override the router-wide ones field by field (one given as undefined
  // keeps the router-wide value).
  const merged: Record<string, unknown> = { ...options.breaker };
  if (own !== undefined)
    for (const [key, value] of Object.entries(own)) if (value !== undefined) merged[key] = value;
  return new Breaker({
    name,
    options: acceptBreakerOptions(merged) ?? breakerOptionsSchema().parse(merged),
    initialState,
    probe,
    random: options.random,
  });
}
