import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';

// The OpenTelemetry API, loaded on first use (decision 0025, second addendum). Also the internal
// entry `@infergate/core/internal/lazy-otel` (no API promise): the batcher and the router load the
// API through it, so no package of ours loads it at import or while nothing is registered. A file
// of its own (lazy-modules.ts re-exports it) so that the entry's CommonJS bundle holds this alone.
// The API publishes CommonJS, so a synchronous require is enough.
const requireFromHere = createRequire(import.meta.url);

let otel: typeof OtelApi | undefined;

/**
 * The OpenTelemetry API (a peer). Its providers live in a global registry, so this CommonJS copy
 * sees the SDK an application registered through either module format, or through another copy of
 * the API of the same major version.
 */
export function loadOtel(): typeof OtelApi {
  otel ??= requireFromHere('@opentelemetry/api') as typeof OtelApi;
  return otel;
}

/**
 * The global where the OpenTelemetry API 1.x (our peer range) keeps everything an application
 * registers: TracerProvider, MeterProvider, propagator, context manager. The first registration
 * makes it.
 */
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/**
 * False while nothing was ever registered with the OpenTelemetry API in this process: every API
 * call is then a no-op, so a call's span and metric can be skipped without loading the API (about
 * 30 ms of a process's first call). Asked per call, so an SDK registered later is used from then on.
 */
export function otelRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[OTEL_API_GLOBAL] !== undefined;
}

/**
 * A span that records nothing, for instrumentation to hand out with tracing off or nothing
 * registered, and to tell apart by identity. The API's own (`trace.wrapSpanContext(
 * INVALID_SPAN_CONTEXT)`) would load the API.
 */
export const NON_RECORDING_SPAN: Span = {
  spanContext: () => ({
    traceId: '00000000000000000000000000000000',
    spanId: '0000000000000000',
    traceFlags: 0,
  }),
  setAttribute: () => NON_RECORDING_SPAN,
  setAttributes: () => NON_RECORDING_SPAN,
  addEvent: () => NON_RECORDING_SPAN,
  addLink: () => NON_RECORDING_SPAN,
  addLinks: () => NON_RECORDING_SPAN,
  setStatus: () => NON_RECORDING_SPAN,
  updateName: () => NON_RECORDING_SPAN,
  end: () => {},
  isRecording: () => false,
  recordException: () => {},
};
