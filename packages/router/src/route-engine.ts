import { abortError, type CallOptions, ErrorCode, InfergateError } from '@infergate/core';
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { NO_SCOPE, type ScopedSignal, scopedSignal } from './attempt-signal.js';
import { fullJitterDelay, sleep } from './backoff.js';
import type { Breaker, BreakerPermit } from './breaker.js';
import type { BreakerSnapshot, BreakerState } from './breaker-state.js';
import { classifyError, type ErrorClass, toInfergateError } from './classify.js';
import type { ResolvedRouterOptions, RouteNode } from './config.js';
import { RetryBudget } from './retry-budget.js';
import { isFixedRoute, planRoute } from './route-plan.js';
import type { AttemptOutcome, RouterEvents } from './router-events.js';
import { RouterTelemetry } from './router-telemetry.js';

/** One destination of a router, whatever kind. */
export interface RouteTarget {
  readonly name: string;
  readonly breaker: Breaker;
  readonly contextWindow: number | undefined;
  /** Backpressure cool-down: skipped until this time (epoch ms). */
  coolUntil: number;
}

export interface ExecutePolicy<T> {
  /** Send only here: no fallback, no retry, no `whenAllOpen` (a pinned sequence). */
  pinned?: T | undefined;
  /** Allow retry passes. @default true */
  retries?: boolean;
}

/** An attempt in progress; a stream finishes it when the stream ends. */
export interface AttemptHandle<T> {
  readonly target: T;
  readonly attempt: number;
  readonly scope: ScopedSignal;
  readonly callScope: ScopedSignal;
  readonly permit: BreakerPermit;
  readonly span: Span;
  readonly started: number;
}

export interface Attempted<R, T> {
  value: R;
  handle: AttemptHandle<T>;
}

type AttemptResult<R, T> =
  | { ok: true; value: R; handle: AttemptHandle<T> }
  | { ok: false; error: InfergateError; errorClass: ErrorClass };

/**
 * The routing loop shared by the Triton and chat routers: walks the planned candidates, skips open
 * or cooling targets, classifies each failure, falls back, retries whole passes with backoff under
 * the retry budget, and fails fast when nothing is available.
 */
/**
 * Wires targets to one engine: telemetry over their breakers and breaker state changes re-emitted
 * as the router's 'breaker-state' events. Both router kinds are built this way.
 */
export function createRouteEngine<T extends RouteTarget>(
  list: readonly T[],
  options: ResolvedRouterOptions,
  events: RouterEvents,
): { engine: RouteEngine<T>; telemetry: RouterTelemetry } {
  const telemetry = new RouterTelemetry(options.name, () => list.map((target) => target.breaker));
  for (const target of list) {
    target.breaker.on('state-change', ({ from, to }) => {
      events.emit('breaker-state', { target: target.name, from, to });
    });
  }
  return { engine: new RouteEngine(list, options, telemetry, events), telemetry };
}

export class RouteEngine<T extends RouteTarget> {
  readonly targets: ReadonlyMap<string, T>;
  readonly #route: RouteNode;
  readonly #options: ResolvedRouterOptions;
  readonly #random: () => number;
  readonly #budget: RetryBudget;
  readonly #telemetry: RouterTelemetry;
  readonly #events: RouterEvents;
  #fixedCandidates: readonly T[] | undefined;

  constructor(
    targets: readonly T[],
    options: ResolvedRouterOptions,
    telemetry: RouterTelemetry,
    events: RouterEvents,
  ) {
    this.targets = new Map(targets.map((target) => [target.name, target]));
    this.#route = options.route ?? { fallback: targets.map((target) => target.name) };
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.#budget = new RetryBudget(options.retry.budget);
    this.#telemetry = telemetry;
    this.#events = events;
  }

  /**
   * Runs `attempt` on targets until one succeeds. With `keepOpen` the successful attempt is left
   * open (its breaker permit and span) for the caller to finish with `finish()` — streams do.
   */
  async run<R>(
    call: CallOptions,
    attempt: (target: T, options: CallOptions, handle: AttemptHandle<T>) => Promise<R>,
    policy: ExecutePolicy<T> = {},
    keepOpen = false,
  ): Promise<Attempted<R, T>> {
    const callScope = scopedSignal(call.signal, call.timeoutMs, 'the call');
    // Nothing to dispose (no signal, no deadline): skip the extra async frame on the hot path.
    if (callScope === NO_SCOPE) return this.#loop(call, callScope, attempt, policy, keepOpen);
    let keepScope = false;
    try {
      const result = await this.#loop(call, callScope, attempt, policy, keepOpen);
      keepScope = keepOpen;
      return result;
    } finally {
      if (!keepScope) callScope.dispose();
    }
  }

  async #loop<R>(
    call: CallOptions,
    callScope: ScopedSignal,
    attempt: (target: T, options: CallOptions, handle: AttemptHandle<T>) => Promise<R>,
    policy: ExecutePolicy<T>,
    keepOpen: boolean,
  ): Promise<Attempted<R, T>> {
    this.#budget.recordRequest();
    const { pinned } = policy;
    const retry = this.#options.retry;
    let attempts = 0;
    let lastError: InfergateError | undefined;
    let lastClass: ErrorClass | undefined;
    let lastTarget: string | undefined;
    let minContext: number | undefined;
    for (let pass = 0; ; pass++) {
      const candidates = pinned !== undefined ? [pinned] : this.#candidates();
      let tried = 0;
      for (const target of candidates) {
        if (minContext !== undefined && !((target.contextWindow ?? 0) > minContext)) continue;
        if (pinned === undefined && target.coolUntil > Date.now()) continue;
        const permit = target.breaker.acquire();
        if (permit === undefined) continue;
        tried += 1;
        attempts += 1;
        if (lastError !== undefined && lastTarget !== undefined && lastClass !== undefined) {
          this.#events.emit('fallback', {
            from: lastTarget,
            to: target.name,
            reason: lastClass,
            error: lastError,
          });
        }
        const result = await this.#attempt(call, callScope, target, permit, attempts, attempt, keepOpen);
        if (result.ok) return { value: result.value, handle: result.handle };
        lastError = result.error;
        lastClass = result.errorClass;
        lastTarget = target.name;
        if (lastClass === 'cancelled' || lastClass === 'reject' || pinned !== undefined) throw lastError;
        if (lastClass === 'context-length') minContext = Math.max(minContext ?? 0, target.contextWindow ?? 0);
      }
      if (tried === 0 && lastError === undefined) {
        if (pinned === undefined && this.#options.whenAllOpen === 'least-recently-failed') {
          const target = this.#leastRecentlyFailed(candidates, minContext);
          if (target !== undefined) {
            const result = await this.#attempt(
              call,
              callScope,
              target,
              target.breaker.forceAcquire(),
              attempts + 1,
              attempt,
              keepOpen,
            );
            if (result.ok) return { value: result.value, handle: result.handle };
            throw result.error;
          }
        }
        throw this.#unavailable(candidates);
      }
      if (lastError === undefined) throw this.#unavailable(candidates);
      if (lastClass === 'context-length' || policy.retries === false || pass >= retry.maxRetries)
        throw lastError;
      let delay = fullJitterDelay(pass, retry.baseDelayMs, retry.maxDelayMs, this.#random);
      const available = this.#availableInMs(candidates);
      if (available > retry.maxDelayMs) throw lastError;
      delay = Math.max(delay, available);
      if (callScope.deadline !== undefined && Date.now() + delay >= callScope.deadline) throw lastError;
      if (!this.#budget.tryRetry()) throw lastError;
      await sleep(delay, callScope.signal);
    }
  }

  async #attempt<R>(
    call: CallOptions,
    callScope: ScopedSignal,
    target: T,
    permit: BreakerPermit,
    attempt: number,
    run: (target: T, options: CallOptions, handle: AttemptHandle<T>) => Promise<R>,
    keepOpen: boolean,
  ): Promise<AttemptResult<R, T>> {
    const remaining = callScope.deadline === undefined ? undefined : callScope.deadline - Date.now();
    const limit =
      remaining === undefined
        ? this.#options.attemptTimeoutMs
        : Math.max(1, Math.min(remaining, this.#options.attemptTimeoutMs ?? remaining));
    const scope = scopedSignal(callScope.signal, limit, 'the attempt', keepOpen);
    const handle: AttemptHandle<T> = {
      target,
      attempt,
      scope,
      callScope,
      permit,
      span: this.#telemetry.startAttempt(target.name, attempt),
      started: performance.now(),
    };
    // The caller's options go through as they are unless the attempt has its own signal or deadline.
    let options: CallOptions = call;
    if ((scope.signal !== undefined && scope.signal !== call.signal) || limit !== undefined) {
      options = { ...call };
      if (scope.signal !== undefined) options.signal = scope.signal;
      if (limit !== undefined) options.timeoutMs = limit;
    }
    try {
      const value = await run(target, options, handle);
      if (!keepOpen) {
        // A closed breaker's success changes nothing to wait for: finish without an extra await.
        if (permit.probe) await this.finish(handle, 'success');
        else void this.finish(handle, 'success');
      }
      return { ok: true, value, handle };
    } catch (thrown) {
      const failure = this.classify(handle, thrown);
      await this.finish(handle, failure.errorClass, failure.error);
      return { ok: false, ...failure };
    }
  }

  /** The typed error and its class for something an attempt threw. */
  classify(handle: AttemptHandle<T>, thrown: unknown): { error: InfergateError; errorClass: ErrorClass } {
    const { callScope, scope } = handle;
    const callSignal = callScope.signal;
    const callOver =
      callSignal?.aborted === true || (callScope.deadline !== undefined && Date.now() >= callScope.deadline);
    if (callOver) {
      const error = callSignal?.aborted === true ? abortError(callSignal) : toInfergateError(thrown);
      return { error, errorClass: 'cancelled' };
    }
    const error = scope.timedOut() ? (scope.signal?.reason as InfergateError) : toInfergateError(thrown);
    return { error, errorClass: classifyError(error) };
  }

  /** Reports an attempt's outcome to its breaker, span, events; cools the target on backpressure. */
  async finish(handle: AttemptHandle<T>, outcome: AttemptOutcome, error?: InfergateError): Promise<void> {
    const { target, permit, span } = handle;
    handle.scope.dispose();
    // A closed breaker's success never changes state: skip waiting for opossum's bookkeeping.
    const before = permit.probe || outcome !== 'success' ? target.breaker.state : undefined;
    if (outcome === 'success') {
      const accounted = permit.success();
      if (permit.probe) await accounted;
    } else if (outcome === 'failure') await permit.failure();
    else await permit.neutral();
    if (outcome === 'backpressure') {
      const wait = Math.min(this.#options.maxCooldownMs, error?.retryAfterMs ?? this.#options.cooldownMs);
      target.coolUntil = Math.max(target.coolUntil, Date.now() + wait);
    }
    if (before !== undefined) {
      const after = target.breaker.state;
      if (after !== before) this.#telemetry.transition(target.name, before, after, span);
    }
    span.setAttribute('infergate.outcome', outcome);
    if (error !== undefined) {
      span.setAttribute('infergate.error_code', error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
    if (this.#events.listens('attempt')) {
      this.#events.emit('attempt', {
        target: target.name,
        attempt: handle.attempt,
        outcome,
        durationMs: performance.now() - handle.started,
        ...(error !== undefined ? { error } : {}),
      });
    }
  }

  /** The breaker of a target; NOT_FOUND for a name the router does not have. */
  breaker(name: string): Breaker {
    const found = this.targets.get(name);
    if (found === undefined) throw new InfergateError(ErrorCode.NotFound, `no target '${name}'`);
    return found.breaker;
  }

  breakerStates(): Record<string, BreakerState> {
    const states: Record<string, BreakerState> = {};
    for (const [name, target] of this.targets) states[name] = target.breaker.state;
    return states;
  }

  /** Every breaker's saved state, for `initialState` on a later start. */
  snapshot(): Record<string, BreakerSnapshot> {
    const saved: Record<string, BreakerSnapshot> = {};
    for (const [name, target] of this.targets) saved[name] = target.breaker.toJSON();
    return saved;
  }

  #candidates(): readonly T[] {
    // A route without weighted groups plans the same order every time: plan it once.
    if (this.#fixedCandidates !== undefined) return this.#fixedCandidates;
    const names = planRoute(this.#route, this.#random);
    const list: T[] = [];
    for (const name of names) {
      const target = this.targets.get(name);
      if (target !== undefined) list.push(target);
    }
    if (isFixedRoute(this.#route)) this.#fixedCandidates = list;
    return list;
  }

  #leastRecentlyFailed(candidates: readonly T[], minContext: number | undefined): T | undefined {
    let best: T | undefined;
    for (const target of candidates) {
      if (minContext !== undefined && !((target.contextWindow ?? 0) > minContext)) continue;
      const failedAt = target.breaker.lastFailureAt ?? Number.NEGATIVE_INFINITY;
      if (best === undefined || failedAt < (best.breaker.lastFailureAt ?? Number.NEGATIVE_INFINITY))
        best = target;
    }
    return best;
  }

  /** Milliseconds until some candidate can be tried again (0 if one can now). */
  #availableInMs(candidates: readonly T[]): number {
    const now = Date.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const target of candidates) {
      const cooling = Math.max(0, target.coolUntil - now);
      const state = target.breaker.state;
      const open = state.kind === 'open' ? Math.max(0, state.halfOpenAt - now) : 0;
      earliest = Math.min(earliest, Math.max(cooling, open));
    }
    return earliest;
  }

  #unavailable(candidates: readonly T[]): InfergateError {
    const anyBreaker = candidates.some((target) => target.breaker.state.kind !== 'closed');
    const retryAfterMs = Math.ceil(this.#availableInMs(candidates));
    const names = candidates.map((target) => target.name).join(', ');
    if (anyBreaker) {
      return new InfergateError(ErrorCode.BreakerOpen, `every target's breaker is open (${names})`, {
        retryAfterMs,
        details: { targets: candidates.map((target) => target.name) },
      });
    }
    return new InfergateError(
      ErrorCode.ResourceExhausted,
      `every target is cooling down after backpressure (${names})`,
      {
        retryAfterMs,
        details: { targets: candidates.map((target) => target.name) },
      },
    );
  }
}
