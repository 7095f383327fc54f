import { createGenAiTimingHistograms, lazyInstruments } from '@infergate/core';
import { otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';
import type { Breaker } from './breaker.js';
import { stateLevel } from './breaker-state.js';
import type { TargetCooling } from './target-cooling.js';
import { VERSION } from './version.js';

/** What the observable gauges read from one live router. */
export interface ObservedRouter {
  readonly name: string;
  targets(): Iterable<{ readonly breaker: Breaker; readonly cooling: TargetCooling }>;
}

// Routers whose breaker and cooling state the gauges report; a router leaves on close().
const observed = new Set<ObservedRouter>();

function observeBreakers(result: ObservableResult): void {
  for (const router of observed)
    for (const target of router.targets())
      result.observe(stateLevel(target.breaker.state.kind), {
        'infergate.router': router.name,
        'infergate.target': target.breaker.name,
      });
}

function observeCooling(result: ObservableResult): void {
  const now = Date.now();
  for (const router of observed)
    for (const target of router.targets())
      result.observe(target.cooling.active(now) ? 1 : 0, {
        'infergate.router': router.name,
        'infergate.target': target.breaker.name,
      });
}

// Rebuilt when the application registers (or replaces) its MeterProvider, even after the router was made.
const registeredInstruments = lazyInstruments('@infergate/router', VERSION, (meter) => {
  meter
    .createObservableGauge('infergate.router.breaker.state', {
      description: 'Breaker state per target: 0 closed, 1 half-open, 2 open',
      unit: '{state}',
    })
    .addCallback(observeBreakers);
  meter
    .createObservableGauge('infergate.router.target.cooling', {
      description:
        'Whether a target is skipped after a busy answer (backpressure cool-down): 1 cooling, 0 not',
      unit: '{state}',
    })
    .addCallback(observeCooling);
  return {
    attempts: meter.createCounter('infergate.router.attempts', {
      description: 'Attempts the router made, by target and outcome',
      unit: '{attempt}',
    }),
    fallbacks: meter.createCounter('infergate.router.fallbacks', {
      description: 'Moves to another target after a failed attempt, by reason',
      unit: '{fallback}',
    }),
    transitions: meter.createCounter('infergate.router.breaker.transitions', {
      description: 'Breaker state changes',
      unit: '{transition}',
    }),
    // The chat router's own GenAI timing (its `duration` is `chatDuration` below).
    ...chatTiming(meter),
  };
});

/**
 * The router's instruments, or `undefined` while no MeterProvider is registered. While nothing at
 * all is registered with the OpenTelemetry API this answers without loading it.
 */
export function routerInstruments(): ReturnType<typeof registeredInstruments> {
  return otelRegistered() ? registeredInstruments() : undefined;
}

export function observeRouter(router: ObservedRouter): void {
  observed.add(router);
  routerInstruments();
}

export function unobserveRouter(router: ObservedRouter): void {
  observed.delete(router);
}

/** Attributes reused per router, target and outcome: most calls repeat the same few. */
const attributeCache = new Map<string, Attributes>();

export function cachedAttributes(key: string, build: () => Attributes): Attributes {
  let attributes = attributeCache.get(key);
  if (attributes === undefined) {
    attributes = build();
    if (attributeCache.size >= 1000) attributeCache.clear();
    attributeCache.set(key, attributes);
  }
  return attributes;
}

function chatTiming(meter: Meter) {
  const { duration, firstChunk, perChunk } = createGenAiTimingHistograms(meter);
  return { chatDuration: duration, firstChunk, perChunk };
}
