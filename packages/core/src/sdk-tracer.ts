import type { Tracer, TracerProvider } from '@opentelemetry/api';
import { loadOtel } from './internal/lazy-modules.js';

interface DelegatingProvider extends TracerProvider {
  getDelegateTracer?(name: string, version?: string): Tracer | undefined;
}

/**
 * The registered SDK's tracer, or `undefined` when no TracerProvider is registered. The API's
 * global provider is a proxy that hands out no-op tracers until an SDK arrives; asking it for its
 * delegate lets instrumentation skip span work entirely (attributes, contexts) when nothing would
 * record it. Asked per call, so an SDK registered later is used from its first call.
 */
export function sdkTracer(scope: string, version: string): Tracer | undefined {
  const provider = loadOtel().trace.getTracerProvider() as DelegatingProvider;
  if (typeof provider.getDelegateTracer === 'function') return provider.getDelegateTracer(scope, version);
  return provider.getTracer(scope, version);
}
