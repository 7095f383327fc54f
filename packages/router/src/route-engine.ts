import {
  type CallOptions,
  type CallScope,
  createCallScope,
  ErrorCode,
  InfergateError,
  NO_SCOPE,
} from '@infergate/core';
import { Admission, admissionCall } from './admission.js';
import {
  type AttemptFailure,
  classifyAttempt,
  contextAfter,
  endsCall,
  failedAfter,
} from './attempt-failure.js';
import { type AttemptFunction, AttemptRunner } from './attempt-runner.js';
import type { Breaker, BreakerPermit } from './breaker.js';
import type { BreakerSnapshot, BreakerState } from './breaker-state.js';
import type { ResolvedRouterOptions } from './config.js';
import { LoadBook } from './load-stats.js';
import { RetryBudget } from './retry-budget.js';
import { pickCandidate, startPass } from './route-pass.js';
import { defaultRoute, RoutePlanner } from './route-planner.js';
import type { Attempted, AttemptHandle, ExecutePolicy, RouteTarget } from './route-target.js';
import type { AttemptOutcome, RouterEvents } from './router-events.js';
import { RouterTelemetry } from './router-telemetry.js';
import { RoutingLoop } from './routing-loop.js';

const DONE = Promise.resolve();
const answerOf = <R>(attempted: { value: R }): R => attempted.value;

export type { Attempted, AttemptHandle, ExecutePolicy, RouteTarget };

/**
 * Wires targets to one engine: telemetry over their breakers and breaker state changes re-emitted
 * as the router's 'breaker-state' events. Both router kinds are built this way.
 */
export function createRouteEngine<T extends RouteTarget>(
  list: readonly T[],
  options: ResolvedRouterOptions,
  events: RouterEvents,
): { engine: RouteEngine<T>; telemetry: RouterTelemetry } {
  const telemetry = new RouterTelemetry(options.name, () => list, options.tracing);
  for (const target of list) {
    target.breaker.on('state-change', ({ from, to }) => {
      events.emit('breaker-state', { target: target.name, from, to });
    });
  }
  return { engine: new RouteEngine(list, options, telemetry, events), telemetry };
}

/**
 * What both routers call: runs a call on their targets through the routing loop (routing-loop.ts)
 * and reports its attempts (attempt-runner.ts). A plain call (no signal, no deadline) starts its
 * first attempt synchronously here, and reaches the loop only when that attempt fails. Every
 * attempt is raced against its scope, so a target that ignores its signal cannot hold the caller
 * past the deadline or an abort. See docs/concepts/routing.md.
 */
export class RouteEngine<T extends RouteTarget> {
  readonly targets: ReadonlyMap<string, T>;
  /** Calls in flight and latency averages per target and model (balancing, admission, hedging). */
  readonly load: LoadBook;
  readonly #planner: RoutePlanner<T>;
  readonly #admission: Admission;
  readonly #attempts: AttemptRunner<T>;
  readonly #budget: RetryBudget;
  readonly #loop: RoutingLoop<T>;

  constructor(
    targets: readonly T[],
    options: ResolvedRouterOptions,
    telemetry: RouterTelemetry,
    events: RouterEvents,
  ) {
    this.targets = new Map(targets.map((target) => [target.name, target]));
    const random = options.random ?? Math.random;
    this.load = new LoadBook(options.balance.decayMs);
    this.#admission = new Admission(options.admission, this.load);
    this.#planner = new RoutePlanner(
      options.route ?? defaultRoute(targets, options.balance.strategy, options.affinity.key !== undefined),
      this.targets,
      options.balance.strategy,
      random,
      this.load,
      options.affinity.maxLoadFactor,
    );
    this.#attempts = new AttemptRunner(options, telemetry, events, this.load);
    this.#budget = new RetryBudget(options.retry.budget);
    this.#loop = new RoutingLoop(
      {
        planner: this.#planner,
        admission: this.#admission,
        attempts: this.#attempts,
        budget: this.#budget,
        random,
      },
      options,
      telemetry,
      events,
    );
  }

  /**
   * Runs `attempt` on targets until one succeeds. With `keepOpen` the successful attempt is left
   * open (its breaker permit and span) for the caller to finish with `finish()` — streams do.
   */
  run<R>(
    call: CallOptions,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T> = {},
    keepOpen = false,
  ): Promise<Attempted<R, T>> {
    let callScope: CallScope;
    try {
      callScope = createCallScope({ signal: call.signal, timeoutMs: call.timeoutMs });
    } catch (error) {
      return Promise.reject(error);
    }
    // Nothing to dispose (no signal, no deadline): the first attempt starts in this turn, without the
    // loop's async frame; the loop takes over only when it fails (or when no target takes the call).
    if (callScope === NO_SCOPE && !keepOpen) {
      try {
        return this.#begin(call, attempt, policy, false) as Promise<Attempted<R, T>>;
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (callScope === NO_SCOPE) return this.#loop.run(call, callScope, attempt, policy, keepOpen);
    return this.#scoped(call, callScope, attempt, policy, keepOpen);
  }

  /**
   * `run` for a caller that wants the answer alone (no handle, nothing kept open): a plain call's
   * promise is then the attempt's own `then`, with no result object and no extra promise after it.
   */
  runValue<R>(call: CallOptions, attempt: AttemptFunction<R, T>, policy: ExecutePolicy<T> = {}): Promise<R> {
    if (call.signal === undefined && call.timeoutMs === undefined) {
      try {
        return this.#begin(call, attempt, policy, true) as Promise<R>;
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.run(call, attempt, policy).then(answerOf);
  }

  /**
   * A plain call's first pass, synchronously up to its first attempt: the same checks as the loop's
   * (the pass's state is handed to the loop, so nothing is planned or counted twice), then one
   * `then` on the attempt. A failure is classified and reported here and the loop resumes the pass
   * at the next candidate, exactly where its own first attempt would have left it.
   */
  #begin<R>(
    call: CallOptions,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T>,
    bare: boolean,
  ): Promise<Attempted<R, T> | R> {
    const now = Date.now();
    this.#budget.recordRequest(now);
    const admit = admissionCall(call);
    const pass = startPass(
      this.#planner,
      this.#admission,
      policy,
      admit,
      NO_SCOPE,
      undefined,
      undefined,
      false,
      now,
    );
    const target = pickCandidate(pass, this.#admission, policy, admit, undefined);
    if (target === undefined) {
      const looped = this.#loop.run(call, NO_SCOPE, attempt, policy, false, { pass, admit, attempts: 0 });
      return bare ? looped.then(answerOf) : looped;
    }
    const { handle, work } = this.#attempts.start(
      call,
      NO_SCOPE,
      target,
      pass.permit as BreakerPermit,
      1,
      attempt,
      false,
      policy.model,
      false,
    );
    return work.then(
      (value) => {
        this.#attempts.settle(handle, 'success');
        return bare ? value : { value, handle };
      },
      (thrown: unknown) => {
        const failure = this.#attempts.failed(call, handle, thrown, false);
        const errorClass = failure.errorClass;
        if (endsCall(errorClass, policy.pinned)) throw failure.error;
        const looped = this.#loop.run(call, NO_SCOPE, attempt, policy, false, {
          pass,
          admit,
          attempts: 1,
          lastError: failure.error,
          lastClass: errorClass,
          lastTarget: target.name,
          failed: failedAfter(undefined, target, errorClass),
          minContext: contextAfter(undefined, target, errorClass),
        });
        return bare ? looped.then(answerOf) : looped;
      },
    );
  }

  async #scoped<R>(
    call: CallOptions,
    callScope: CallScope,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T>,
    keepOpen: boolean,
  ): Promise<Attempted<R, T>> {
    let keepScope = false;
    try {
      const result = await this.#loop.run(call, callScope, attempt, policy, keepOpen);
      keepScope = keepOpen;
      return result;
    } finally {
      if (!keepScope) callScope.dispose();
    }
  }

  /** The typed error and its class for something an attempt threw. */
  classify(handle: AttemptHandle<T>, thrown: unknown): AttemptFailure {
    return classifyAttempt(handle, thrown);
  }

  /** Reports an attempt's outcome to its breaker, span, events; cools the target on backpressure. */
  finish(handle: AttemptHandle<T>, outcome: AttemptOutcome, error?: InfergateError): Promise<void> {
    this.#attempts.settle(handle, outcome, error);
    return DONE;
  }

  /** The breaker of a target; NOT_FOUND for a name the router does not have. */
  breaker(name: string): Breaker {
    const found = this.targets.get(name);
    if (found === undefined) throw new InfergateError(ErrorCode.NotFound, `no target '${name}'`);
    return found.breaker;
  }

  // Built with Object.fromEntries, which defines an own entry per target: a plain assignment under
  // a target named `__proto__` replaced the record's prototype instead (and JSON.stringify left the
  // target out).
  /** Every target's breaker state: a plain object with an own entry per target name. */
  breakerStates(): Record<string, BreakerState> {
    return Object.fromEntries(Array.from(this.targets, ([name, target]) => [name, target.breaker.state]));
  }

  /** Every breaker's saved state, for `initialState` on a later start (an own entry per target name). */
  snapshot(): Record<string, BreakerSnapshot> {
    return Object.fromEntries(Array.from(this.targets, ([name, target]) => [name, target.breaker.toJSON()]));
  }
}
