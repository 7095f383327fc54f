import type { Meter, MeterProvider } from '@opentelemetry/api';
import { loadOtel } from './internal/lazy-modules.js';

/**
 * OpenTelemetry instruments that follow the registered MeterProvider. The metrics API has no proxy
 * (unlike tracing): an instrument made before the application registers its SDK stays a no-op
 * forever. This builds the instruments on first use and again whenever the global provider
 * changes, so a library may record from its first call whatever the order of start-up.
 *
 * With no SDK registered `get()` returns instruments of the API's no-op meter; recording on them
 * costs a function call.
 */
export function lazyInstruments<T>(scope: string, version: string, build: (meter: Meter) => T): () => T {
  let provider: MeterProvider | undefined;
  let instruments: T | undefined;
  return () => {
    const current = loadOtel().metrics.getMeterProvider();
    if (instruments === undefined || current !== provider) {
      provider = current;
      instruments = build(current.getMeter(scope, version));
    }
    return instruments;
  };
}
