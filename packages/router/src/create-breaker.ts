import { Breaker, type ProbeFunction } from './breaker.js';
import type { BreakerSnapshot } from './breaker-state.js';
import { breakerOptionsSchema, type ResolvedRouterOptions } from './config.js';

/** Builds a target's breaker from the router-wide and the target's own options. */
export function createBreaker(
  name: string,
  options: ResolvedRouterOptions,
  own: Record<string, unknown> | undefined,
  probe?: ProbeFunction,
): Breaker {
  const initialState = options.initialState?.[name] as BreakerSnapshot | undefined;
  return new Breaker({
    name,
    options: breakerOptionsSchema.parse({ ...options.breaker, ...own }),
    initialState,
    probe,
    random: options.random,
  });
}
