import { type Attributes, metrics, type Span, SpanKind, trace } from '@opentelemetry/api';
import type { Breaker } from './breaker.js';
import { type BreakerState, stateLevel } from './breaker-state.js';
import { VERSION } from './version.js';

const SCOPE = '@infergate/router';

/**
 * Spans and metrics of one router: a span per attempt (`infergate.router.attempt`), breaker
 * transitions as span events and a counter, and an observable gauge of each breaker's state
 * (0 closed, 1 half-open, 2 open). With no OpenTelemetry SDK registered all of it is a no-op.
 */
export class RouterTelemetry {
  readonly #router: string;
  readonly #tracer = trace.getTracer(SCOPE, VERSION);
  readonly #transitions;
  readonly #gauge;
  readonly #observe;

  constructor(router: string, breakers: () => Iterable<Breaker>) {
    this.#router = router;
    const meter = metrics.getMeter(SCOPE, VERSION);
    this.#transitions = meter.createCounter('infergate.router.breaker.transitions', {
      description: 'Breaker state changes',
    });
    this.#gauge = meter.createObservableGauge('infergate.router.breaker.state', {
      description: 'Breaker state per target: 0 closed, 1 half-open, 2 open',
    });
    this.#observe = (result: { observe(value: number, attributes: Attributes): void }) => {
      for (const breaker of breakers()) {
        result.observe(stateLevel(breaker.state.kind), {
          'infergate.router': this.#router,
          'infergate.target': breaker.name,
        });
      }
    };
    this.#gauge.addCallback(this.#observe);
  }

  startAttempt(target: string, attempt: number): Span {
    return this.#tracer.startSpan('infergate.router.attempt', {
      kind: SpanKind.INTERNAL,
      attributes: {
        'infergate.router': this.#router,
        'infergate.target': target,
        'infergate.attempt': attempt,
      },
    });
  }

  transition(target: string, from: BreakerState, to: BreakerState, span?: Span): void {
    const attributes = {
      'infergate.router': this.#router,
      'infergate.target': target,
      'infergate.breaker.from': from.kind,
      'infergate.breaker.to': to.kind,
    };
    this.#transitions.add(1, attributes);
    (span ?? trace.getActiveSpan())?.addEvent('infergate.breaker.state_change', attributes);
  }

  dispose(): void {
    this.#gauge.removeCallback(this.#observe);
  }
}
