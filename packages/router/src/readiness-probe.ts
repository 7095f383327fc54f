import type { ProbeFunction } from './breaker.js';

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
