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

/** A readiness probe from a TritonClient-like object: ModelReady of `model`, else ServerReady. */
export function readinessProbe(
  client: {
    serverReady(options?: { signal?: AbortSignal }): Promise<boolean>;
    modelReady(model: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  },
  model?: string,
): ProbeFunction {
  return (signal) =>
    model === undefined ? client.serverReady({ signal }) : client.modelReady(model, { signal });
}
