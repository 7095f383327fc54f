import { type InfergateError, sdkTracer } from '@infergate/core';
import { loadOtel, NON_RECORDING_SPAN, otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes, Span } from '@opentelemetry/api';
import type { Breaker } from './breaker.js';
import type { BreakerState } from './breaker-state.js';
import type { ErrorClass } from './classify.js';
import type { AttemptOutcome } from './router-events.js';
import {
  cachedAttributes,
  type ObservedRouter,
  observeRouter,
  routerInstruments,
  unobserveRouter,
} from './router-metrics.js';
import type { TargetCooling } from './target-cooling.js';
import { VERSION } from './version.js';

const SCOPE = '@infergate/router';

/** The span that records nothing: what is handed out with tracing off or nothing registered. */
const OFF = NON_RECORDING_SPAN;

/**
 * Spans and metrics of one router: a span per attempt (`infergate.router.attempt`) that is the
 * active span while the attempt runs, so the target's own spans (RPC, GenAI) sit under it; breaker
 * transitions as span events and a counter; attempts by outcome; fallbacks; and observable gauges
 * of each target's breaker state and cooling (router-metrics.ts). With no OpenTelemetry SDK
 * registered none of it records, and while nothing at all is registered with the API it is not even
 * loaded; with `tracing: false` none of it runs.
 */
export class RouterTelemetry implements ObservedRouter {
  readonly name: string;
  readonly #enabled: boolean;
  /** Attempt counter attributes by target and outcome: a router has few of each. */
  readonly #attemptAttributes = new Map<string, Map<string, Attributes>>();
  readonly #targets: () => Iterable<{ readonly breaker: Breaker; readonly cooling: TargetCooling }>;

  constructor(
    router: string,
    targets: () => Iterable<{ readonly breaker: Breaker; readonly cooling: TargetCooling }>,
    enabled = true,
  ) {
    this.name = router;
    this.#targets = targets;
    this.#enabled = enabled;
    if (enabled) observeRouter(this);
  }

  targets(): Iterable<{ readonly breaker: Breaker; readonly cooling: TargetCooling }> {
    return this.#targets();
  }

  startAttempt(target: string, attempt: number): Span {
    const tracer = this.#enabled && otelRegistered() ? sdkTracer(SCOPE, VERSION) : undefined;
    if (tracer === undefined) return OFF;
    return tracer.startSpan('infergate.router.attempt', {
      kind: loadOtel().SpanKind.INTERNAL,
      attributes: {
        'infergate.router': this.name,
        'infergate.target': target,
        'infergate.attempt': attempt,
      },
    });
  }

  /** True for a span that records (tracing on, an SDK registered): `inAttempt` has work to do. */
  tracesAttempt(span: Span): boolean {
    return span !== OFF;
  }

  /** Runs an attempt with its span active. */
  inAttempt<R>(span: Span, run: () => Promise<R>): Promise<R> {
    if (span === OFF) return run();
    const { context, trace } = loadOtel();
    return context.with(trace.setSpan(context.active(), span), run);
  }

  /** Ends an attempt's span and counts the attempt by outcome. */
  attemptEnded(target: string, outcome: AttemptOutcome, span: Span, error?: InfergateError): void {
    if (!this.#enabled) return;
    if (span !== OFF) {
      span.setAttribute('infergate.outcome', outcome);
      if (error !== undefined) {
        span.setAttribute('infergate.error_code', error.code);
        span.setStatus({ code: loadOtel().SpanStatusCode.ERROR, message: error.message });
      }
      span.end();
    }
    const recording = routerInstruments();
    if (recording === undefined) return;
    let byOutcome = this.#attemptAttributes.get(target);
    if (byOutcome === undefined) {
      byOutcome = new Map();
      this.#attemptAttributes.set(target, byOutcome);
    }
    let attributes = byOutcome.get(outcome);
    if (attributes === undefined) {
      attributes = {
        'infergate.router': this.name,
        'infergate.target': target,
        'infergate.outcome': outcome,
      };
      byOutcome.set(outcome, attributes);
    }
    recording.attempts.add(1, attributes);
  }

  fallback(from: string, to: string, reason: ErrorClass): void {
    if (!this.#enabled) return;
    routerInstruments()?.fallbacks.add(
      1,
      cachedAttributes(`f\u0001${this.name}\u0001${from}\u0001${to}\u0001${reason}`, () => ({
        'infergate.router': this.name,
        'infergate.fallback.from': from,
        'infergate.fallback.to': to,
        'infergate.fallback.reason': reason,
      })),
    );
  }

  transition(target: string, from: BreakerState, to: BreakerState, span?: Span): void {
    if (!this.#enabled) return;
    const attributes = {
      'infergate.router': this.name,
      'infergate.target': target,
      'infergate.breaker.from': from.kind,
      'infergate.breaker.to': to.kind,
    };
    routerInstruments()?.transitions.add(1, attributes);
    // Without a registration there is no context manager, hence no active span to find.
    const into = span ?? (otelRegistered() ? loadOtel().trace.getActiveSpan() : undefined);
    into?.addEvent('infergate.breaker.state_change', attributes);
  }

  dispose(): void {
    unobserveRouter(this);
  }
}
