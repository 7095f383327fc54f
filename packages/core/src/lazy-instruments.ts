import type { Meter, MeterProvider, MetricsAPI, ObservableResult } from '@opentelemetry/api';
import { loadOtel } from './internal/lazy-modules.js';

// The API's metrics singleton and its no-op meter, taken once: reading them through the module's
// exports on every call cost more than the provider look-up itself.
let otelMetrics: { api: MetricsAPI; noopMeter: Meter } | undefined;

function metricsApi(): { api: MetricsAPI; noopMeter: Meter } {
  if (otelMetrics === undefined) {
    const otel = loadOtel();
    otelMetrics = { api: otel.metrics, noopMeter: otel.createNoopMeter() };
  }
  return otelMetrics;
}

/**
 * OpenTelemetry instruments that follow the registered MeterProvider, or `undefined` while none is
 * registered. The metrics API has no proxy (unlike tracing): an instrument made before the
 * application registers its SDK stays a no-op forever, so this builds the instruments on first
 * use and again whenever the global provider changes. Returning `undefined` for the API's no-op
 * meter lets callers skip building attributes too: with no SDK, a metric costs one provider look-up.
 */
export function lazyInstruments<T>(
  scope: string,
  version: string,
  build: (meter: Meter) => T,
): () => T | undefined {
  let provider: MeterProvider | undefined;
  let instruments: T | undefined;
  return () => {
    const { api, noopMeter } = metricsApi();
    // Asked on every call (one global look-up): a provider registered later is used from then on.
    const current = api.getMeterProvider();
    if (current !== provider) {
      provider = current;
      const meter = current.getMeter(scope, version);
      instruments = meter === noopMeter ? undefined : build(meter);
    }
    return instruments;
  };
}

/** Something an observable gauge reads each time the SDK collects. */
export interface GaugeSource {
  observe(result: ObservableResult): void;
}

/**
 * An observable gauge over a set of live objects (batchers, trackers, …): each collection asks
 * every member present at that moment to observe; members join and leave the set as they open and close.
 */
export function createLiveGauge(
  meter: Meter,
  name: string,
  options: { description: string; unit: string },
  live: ReadonlySet<GaugeSource>,
): void {
  meter.createObservableGauge(name, options).addCallback((result) => {
    for (const source of live) source.observe(result);
  });
}
