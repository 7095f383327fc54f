import type { CallOptions, CallScope, InfergateError } from '@infergate/core';
import { type AttemptFailure, classifyAttempt } from './attempt-failure.js';
import type { BreakerPermit } from './breaker.js';
import { isGatewayFailure } from './classify.js';
import type { ResolvedRouterOptions } from './config.js';
import type { LoadBook } from './load-stats.js';
import { openAttempt } from './open-attempt.js';
import type { AttemptHandle, RouteTarget } from './route-target.js';
import type { AttemptOutcome, RouterEvents } from './router-events.js';
import type { RouterTelemetry } from './router-telemetry.js';

export type AttemptFunction<R, T> = (target: T, options: CallOptions, handle: AttemptHandle<T>) => Promise<R>;

/**
 * One attempt's life for the route engine: opened and started on its target (span, load, timeout),
 * then settled — the breaker hears its outcome, the span and events record it, and a busy answer
 * cools the target. The engine decides where and when; this says what an attempt does and reports.
 */
export class AttemptRunner<T extends RouteTarget> {
  readonly #options: ResolvedRouterOptions;
  /** The option every attempt reads, kept here: an attempt does not read the whole options object. */
  readonly #attemptTimeoutMs: number | undefined;
  readonly #telemetry: RouterTelemetry;
  readonly #events: RouterEvents;
  readonly #load: LoadBook;

  constructor(
    options: ResolvedRouterOptions,
    telemetry: RouterTelemetry,
    events: RouterEvents,
    load: LoadBook,
  ) {
    this.#options = options;
    this.#attemptTimeoutMs = options.attemptTimeoutMs;
    this.#telemetry = telemetry;
    this.#events = events;
    this.#load = load;
  }

  /**
   * Opens an attempt on `target` and starts it: its handle, and the target's answer raced against
   * the attempt's scope (a target that throws instead of rejecting fails the attempt the same way).
   * A `last` resort gets the rest of the call's deadline, not the attempt timeout.
   */
  start<R>(
    call: CallOptions,
    callScope: CallScope,
    target: T,
    permit: BreakerPermit,
    attempt: number,
    run: AttemptFunction<R, T>,
    keepOpen: boolean,
    model: string | undefined,
    last: boolean,
  ): { handle: AttemptHandle<T>; work: Promise<R> } {
    const { handle, options } = openAttempt(call, callScope, target, permit, attempt, keepOpen, {
      attemptTimeoutMs: last ? undefined : this.#attemptTimeoutMs,
      span: this.#telemetry.startAttempt(target.name, attempt),
      load: this.#load.get(target.name, model),
    });
    const span = handle.span;
    let work: Promise<R>;
    try {
      work = handle.scope.race(
        this.#telemetry.tracesAttempt(span)
          ? this.#telemetry.inAttempt(span, () => run(target, options, handle))
          : run(target, options, handle),
      );
    } catch (thrown) {
      work = Promise.reject(thrown);
    }
    return { handle, work };
  }

  /** Classifies what a failed attempt threw and reports it (breaker, span, events, cooling). */
  failed(call: CallOptions, handle: AttemptHandle<T>, thrown: unknown, last: boolean): AttemptFailure {
    const failure = classifyAttempt(handle, thrown);
    // A last resort that outlived the attempt timeout and then the call's deadline (not an abort
    // by the caller) was as slow as a timed-out attempt: its breaker hears of it as one.
    const attemptTimeoutMs = this.#attemptTimeoutMs;
    const slow =
      last &&
      failure.errorClass === 'cancelled' &&
      call.signal?.aborted !== true &&
      attemptTimeoutMs !== undefined &&
      performance.now() - handle.started >= attemptTimeoutMs;
    this.settle(handle, slow ? 'failure' : failure.errorClass, failure.error);
    return failure;
  }

  /**
   * Reports an attempt's outcome to its breaker, span, events; cools the target on backpressure.
   * In the same turn: the breaker counts the outcome at once (and trips or ejects the target now,
   * when this was the failure that says so), so a failed call moves on to the next target without
   * waiting, and a trip is recorded on the attempt's span before the span ends.
   */
  settle(handle: AttemptHandle<T>, outcome: AttemptOutcome, error?: InfergateError): void {
    const { target, permit, span } = handle;
    handle.stopTimer(outcome === 'success');
    handle.load.end();
    handle.scope.dispose();
    // A closed breaker's success never changes its state: no state to compare.
    const before = permit.probe || outcome !== 'success' ? target.breaker.state : undefined;
    if (outcome === 'success') void permit.success();
    else if (outcome === 'failure')
      void permit.failure(error !== undefined && isGatewayFailure(error) ? 'gateway' : 'other');
    else if (outcome === 'too-late') void permit.release();
    else void permit.neutral();
    if (outcome === 'backpressure')
      target.cooling.backpressure(Date.now(), error?.retryAfterMs, this.#options);
    if (before !== undefined) {
      const after = target.breaker.state;
      if (after !== before) this.#telemetry.transition(target.name, before, after, span);
    }
    this.#telemetry.attemptEnded(target.name, outcome, span, error);
    this.#emitAttempt(handle, outcome, error);
  }

  #emitAttempt(handle: AttemptHandle<T>, outcome: AttemptOutcome, error?: InfergateError): void {
    if (!this.#events.listens('attempt')) return;
    this.#events.emit('attempt', {
      target: handle.target.name,
      attempt: handle.attempt,
      outcome,
      durationMs: performance.now() - handle.started,
      ...(error !== undefined ? { error } : {}),
    });
  }
}
