import {
  abortError,
  type CallOptions,
  type CallScope,
  createCallScope,
  ErrorCode,
  InfergateError,
  NO_SCOPE,
  sleep,
} from '@infergate/core';
import { Admission, type AdmissionCall, admissionCall, type Refusal } from './admission.js';
import type { Breaker, BreakerPermit } from './breaker.js';
import type { BreakerSnapshot, BreakerState } from './breaker-state.js';
import {
  availableInMs,
  avoidLost,
  canTake,
  connectionLost,
  fits,
  leastRecentlyFailed,
  roomAt,
  unavailableError,
} from './candidate-state.js';
import { classifyError, type ErrorClass, isGatewayFailure } from './classify.js';
import type { ResolvedRouterOptions } from './config.js';
import { retryPassDelay } from './full-jitter-delay.js';
import { LoadBook } from './load-stats.js';
import { openAttempt } from './open-attempt.js';
import { RetryBudget } from './retry-budget.js';
import { defaultRoute, RoutePlanner } from './route-planner.js';
import type { Attempted, AttemptHandle, ExecutePolicy, RouteTarget } from './route-target.js';
import type { AttemptOutcome, RouterEvents } from './router-events.js';
import { RouterTelemetry } from './router-telemetry.js';

/** A failed attempt: its typed error and class (already reported to the target's breaker). */
interface AttemptFailure {
  error: InfergateError;
  errorClass: ErrorClass;
}

type AttemptFunction<R, T> = (target: T, options: CallOptions, handle: AttemptHandle<T>) => Promise<R>;

/**
 * The attempt timeout is there to move a call on to another target. A target that has not failed
 * this call, tried after another did, with no other candidate left that could take the call, has
 * nowhere to move it to: it gets the rest of the call's deadline (only when the call has one).
 * Cutting it short would fail calls a healthy fallback is still serving — a whole failover wave
 * queued on it at once — and eject the one target left for queueing them.
 */
function lastResort<T extends RouteTarget>(
  target: T,
  candidates: readonly T[],
  failed: ReadonlySet<T>,
  minContext: number | undefined,
  callScope: CallScope,
): boolean {
  if (callScope.deadline === undefined || failed.has(target)) return false;
  return !candidates.some((other) => other !== target && canTake(other, failed, minContext));
}

/** A failure of this class ends the call: no other target is tried (nor any, for a pinned call). */
function endsCall(errorClass: ErrorClass, pinned: RouteTarget | undefined): boolean {
  return errorClass === 'cancelled' || errorClass === 'reject' || pinned !== undefined;
}

/**
 * The call's failed targets after `target` failed with `errorClass`: a failed (or too-late) target
 * is not tried again for this call while another candidate can take it (a too-late target would only
 * refuse again, sooner still).
 */
function failedAfter<T>(failed: Set<T> | undefined, target: T, errorClass: ErrorClass): Set<T> | undefined {
  if (errorClass !== 'failure' && errorClass !== 'too-late') return failed;
  const set = failed ?? new Set<T>();
  set.add(target);
  return set;
}

/** The call's least context window after `target` answered that the input is too long for it. */
function contextAfter(
  minContext: number | undefined,
  target: RouteTarget,
  errorClass: ErrorClass,
): number | undefined {
  return errorClass === 'context-length' ? Math.max(minContext ?? 0, target.contextWindow ?? 0) : minContext;
}

/** One pass over the planned candidates: what its checks need, and how far it has got. */
interface Pass<T> {
  readonly candidates: readonly T[];
  readonly budgetMs: number | undefined;
  /** The targets that had failed this call when the pass began (the same set, growing). */
  readonly avoid: ReadonlySet<T> | undefined;
  readonly avoidFailed: boolean;
  readonly skipLost: boolean;
  /** The pass's start: the time for its cooling checks until it has awaited an attempt. */
  readonly now: number;
  /** The index of the next candidate to look at. */
  next: number;
  /** Candidates that got an attempt in this pass. */
  tried: number;
  refused: Refusal | undefined;
  /** The permit of the candidate `#pick` last returned. */
  permit: BreakerPermit | undefined;
}

/** Where `#begin` leaves a call for the routing loop: its first pass, and its first attempt's failure. */
interface Resume<T> {
  pass: Pass<T>;
  admit: AdmissionCall;
  attempts: number;
  lastError?: InfergateError;
  lastClass?: ErrorClass;
  lastTarget?: string;
  failed?: Set<T> | undefined;
  minContext?: number | undefined;
}

/** No target failed this call yet (most calls): nothing allocated. */
const NONE: ReadonlySet<never> = new Set();
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
 * The routing loop shared by the Triton and chat routers: walks the planned candidates, skips open
 * or cooling targets, classifies each failure, falls back, waits briefly for a busy target's room,
 * retries whole passes with backoff under the retry budget, and fails fast when nothing is
 * available. Every attempt is raced against its scope, so a target that ignores its signal cannot
 * hold the caller past the deadline or an abort. See docs/concepts/routing.md.
 */
export class RouteEngine<T extends RouteTarget> {
  readonly targets: ReadonlyMap<string, T>;
  /** Calls in flight and latency averages per target and model (balancing, admission, hedging). */
  readonly load: LoadBook;
  readonly #planner: RoutePlanner<T>;
  readonly #admission: Admission;
  readonly #options: ResolvedRouterOptions;
  readonly #random: () => number;
  readonly #budget: RetryBudget;
  readonly #telemetry: RouterTelemetry;
  readonly #events: RouterEvents;

  constructor(
    targets: readonly T[],
    options: ResolvedRouterOptions,
    telemetry: RouterTelemetry,
    events: RouterEvents,
  ) {
    this.targets = new Map(targets.map((target) => [target.name, target]));
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.load = new LoadBook(options.balance.decayMs);
    this.#admission = new Admission(options.admission, this.load);
    this.#planner = new RoutePlanner(
      options.route ?? defaultRoute(targets, options.balance.strategy, options.affinity.key !== undefined),
      this.targets,
      options.balance.strategy,
      this.#random,
      this.load,
      options.affinity.maxLoadFactor,
    );
    this.#budget = new RetryBudget(options.retry.budget);
    this.#telemetry = telemetry;
    this.#events = events;
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
    if (callScope === NO_SCOPE) return this.#loop(call, callScope, attempt, policy, keepOpen);
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
    const pass = this.#newPass(policy, admit, NO_SCOPE, undefined, undefined, false, now);
    const target = this.#pick(pass, policy, admit, undefined);
    if (target === undefined) {
      const looped = this.#loop(call, NO_SCOPE, attempt, policy, false, { pass, admit, attempts: 0 });
      return bare ? looped.then(answerOf) : looped;
    }
    const { handle, work } = this.#start(
      call,
      NO_SCOPE,
      target,
      pass.permit as BreakerPermit,
      1,
      attempt,
      false,
      {
        policy,
        last: false,
      },
    );
    return work.then(
      (value) => {
        this.#settle(handle, 'success');
        return bare ? value : { value, handle };
      },
      (thrown: unknown) => {
        const failure = this.#failed(call, handle, thrown, false);
        const errorClass = failure.errorClass;
        if (endsCall(errorClass, policy.pinned)) throw failure.error;
        const looped = this.#loop(call, NO_SCOPE, attempt, policy, false, {
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

  /** A pass's candidates and checks, computed once at its start. */
  #newPass(
    policy: ExecutePolicy<T>,
    admit: AdmissionCall,
    callScope: CallScope,
    failed: Set<T> | undefined,
    minContext: number | undefined,
    allowLost: boolean,
    now: number,
  ): Pass<T> {
    const { pinned } = policy;
    const candidates =
      pinned !== undefined ? [pinned] : without(this.#planner.candidates(policy), policy.exclude);
    const budgetMs = this.#admission.budgetMs(admit, callScope);
    const avoid = failed;
    const avoidFailed =
      avoid !== undefined && candidates.some((target) => canTake(target, avoid, minContext));
    // A target whose connection was just lost (its redial not answered yet) is passed over while
    // another can take the call: the lost connection is the first sign of a crash.
    const skipLost =
      !allowLost && pinned === undefined && avoidLost(candidates, avoid ?? NONE, minContext, now);
    return {
      candidates,
      budgetMs,
      avoid,
      avoidFailed,
      skipLost,
      now,
      next: 0,
      tried: 0,
      refused: undefined,
      permit: undefined,
    };
  }

  /**
   * The pass's next candidate that can take the call, from `pass.next` on, with its breaker permit
   * in `pass.permit` (counted as tried); undefined when none is left. Refusals are kept in the pass.
   */
  #pick(
    pass: Pass<T>,
    policy: ExecutePolicy<T>,
    admit: AdmissionCall,
    minContext: number | undefined,
  ): T | undefined {
    const { pinned } = policy;
    const { candidates, avoid } = pass;
    while (pass.next < candidates.length) {
      const target = candidates[pass.next] as T;
      pass.next += 1;
      if (!fits(target, minContext)) continue;
      if (pass.avoidFailed && avoid?.has(target) === true) continue;
      if (pass.skipLost && connectionLost(target, pass.now)) continue;
      // Until this pass has awaited an attempt, its start is still the time.
      if (pinned === undefined && target.cooling.active(pass.tried === 0 ? pass.now : Date.now())) continue;
      const refusal =
        pinned === undefined
          ? this.#admission.refuse(target, policy.model, admit, pass.budgetMs, policy.costOf)
          : undefined;
      if (refusal !== undefined) {
        pass.refused ??= refusal;
        continue;
      }
      const permit = target.breaker.acquire();
      if (permit === undefined) continue;
      pass.tried += 1;
      pass.permit = permit;
      return target;
    }
    return undefined;
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
      const result = await this.#loop(call, callScope, attempt, policy, keepOpen);
      keepScope = keepOpen;
      return result;
    } finally {
      if (!keepScope) callScope.dispose();
    }
  }

  async #loop<R>(
    call: CallOptions,
    callScope: CallScope,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T>,
    keepOpen: boolean,
    resume?: Resume<T>,
  ): Promise<Attempted<R, T>> {
    // Clock reads cost 0.1–0.2 µs each on some hosts: the first pass reuses this one (only
    // synchronous work lies between here and it); later passes, after an await, read their own.
    let firstPassAt: number | undefined;
    if (resume === undefined) {
      firstPassAt = Date.now();
      this.#budget.recordRequest(firstPassAt);
    }
    const { pinned } = policy;
    const retry = this.#options.retry;
    let attempts = resume?.attempts ?? 0;
    let retries = 0;
    let waitedMs = 0;
    /** Targets that failed this call: tried again only when no other candidate can take it. */
    let failed: Set<T> | undefined = resume?.failed;
    let lastError: InfergateError | undefined = resume?.lastError;
    let lastClass: ErrorClass | undefined = resume?.lastClass;
    let lastTarget: string | undefined = resume?.lastTarget;
    let minContext: number | undefined = resume?.minContext;
    /** Set once a pass that passed over lost targets could send the call nowhere else. */
    let allowLost = false;
    // A call whose deadline already passed (or that was aborted) reaches no target at all.
    if (callScope.signal?.aborted === true) throw abortError(callScope.signal);
    const admit = resume?.admit ?? admissionCall(call);
    /** A pass begun by `#begin` (its first attempt already made): carried on from where it stopped. */
    let resumed = resume?.pass;
    for (;;) {
      const pass =
        resumed ??
        this.#newPass(policy, admit, callScope, failed, minContext, allowLost, firstPassAt ?? Date.now());
      resumed = undefined;
      firstPassAt = undefined;
      const { candidates, budgetMs, skipLost } = pass;
      for (;;) {
        const target = this.#pick(pass, policy, admit, minContext);
        if (target === undefined) break;
        const permit = pass.permit as BreakerPermit;
        attempts += 1;
        if (lastError !== undefined && lastTarget !== undefined && lastClass !== undefined) {
          this.#events.emit('fallback', {
            from: lastTarget,
            to: target.name,
            reason: lastClass,
            error: lastError,
          });
          this.#telemetry.fallback(lastTarget, target.name, lastClass);
        }
        const last = failed !== undefined && lastResort(target, candidates, failed, minContext, callScope);
        // The attempt is awaited here rather than in a helper of its own: one async frame per call.
        const { handle, work } = this.#start(call, callScope, target, permit, attempts, attempt, keepOpen, {
          policy,
          last,
        });
        let failure: AttemptFailure;
        try {
          const value = await work;
          if (!keepOpen) this.#settle(handle, 'success');
          return { value, handle };
        } catch (thrown) {
          failure = this.#failed(call, handle, thrown, last);
        }
        lastError = failure.error;
        lastClass = failure.errorClass;
        lastTarget = target.name;
        if (endsCall(lastClass, pinned)) throw lastError;
        failed = failedAfter(failed, target, lastClass);
        minContext = contextAfter(minContext, target, lastClass);
      }
      const { tried, refused } = pass;
      if (skipLost && tried === 0) {
        // The others could not take it after all (cooling, refused, no probe slot): a lost target
        // is better than none, so the same pass again with it.
        allowLost = true;
        continue;
      }
      if (lastClass === 'context-length') throw lastError;
      // A candidate that has not failed this call is only cooling after a busy answer: wait for its
      // room (briefly, within the deadline) rather than fail the call or spend a retry on it.
      const room = pinned === undefined ? roomAt(candidates, failed ?? NONE, minContext) : undefined;
      if (room !== undefined) {
        const wait = Math.max(0, room.at - Date.now()) + this.#random() * room.spreadMs;
        const deadline = callScope.deadline;
        if (
          waitedMs + wait <= this.#options.capacityWaitMs &&
          (deadline === undefined || Date.now() + wait < deadline)
        ) {
          waitedMs += wait;
          await sleep(wait, callScope.signal);
          continue;
        }
        throw lastError ?? unavailableError(candidates);
      }
      if (tried === 0 && lastError === undefined) {
        if (refused !== undefined) {
          throw this.#admission.error(refused, candidates, policy.model, admit, budgetMs);
        }
        if (pinned === undefined && this.#options.whenAllOpen === 'least-recently-failed') {
          const target = leastRecentlyFailed(candidates, minContext);
          if (target !== undefined) {
            const permit = target.breaker.forceAcquire();
            const { handle, work } = this.#start(
              call,
              callScope,
              target,
              permit,
              attempts + 1,
              attempt,
              keepOpen,
              { policy, last: false },
            );
            return await this.#answerOrThrow(call, handle, work, keepOpen);
          }
        }
        throw unavailableError(candidates);
      }
      if (lastError === undefined) throw unavailableError(candidates);
      // Every candidate failed this call (or is open): a retry pass, with backoff, under the budget.
      // Not after a target that found the deadline too close: the time left only shrinks.
      if (policy.retries === false || retries >= retry.maxRetries || lastClass === 'too-late')
        throw lastError;
      const delay = retryPassDelay(
        retries,
        retry.baseDelayMs,
        retry.maxDelayMs,
        availableInMs(candidates),
        this.#random,
      );
      if (delay === undefined) throw lastError;
      if (callScope.deadline !== undefined && Date.now() + delay >= callScope.deadline) throw lastError;
      if (!this.#budget.tryRetry()) throw lastError;
      retries += 1;
      await sleep(delay, callScope.signal);
    }
  }

  /**
   * Opens an attempt on `target` and starts it: its handle, and the target's answer raced against
   * the attempt's scope (a target that throws instead of rejecting fails the attempt the same way).
   * A `last` resort gets the rest of the call's deadline, not the attempt timeout.
   */
  #start<R>(
    call: CallOptions,
    callScope: CallScope,
    target: T,
    permit: BreakerPermit,
    attempt: number,
    run: AttemptFunction<R, T>,
    keepOpen: boolean,
    parts: { policy: ExecutePolicy<T>; last: boolean },
  ): { handle: AttemptHandle<T>; work: Promise<R> } {
    const { handle, options } = openAttempt(call, callScope, target, permit, attempt, keepOpen, {
      attemptTimeoutMs: parts.last ? undefined : this.#options.attemptTimeoutMs,
      span: this.#telemetry.startAttempt(target.name, attempt),
      load: this.load.get(target.name, parts.policy.model),
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

  /**
   * The answer of a started attempt, settled as a success, or its typed error thrown once reported
   * (the routing loop awaits its attempts inline instead, to keep a plain call to one async frame).
   */
  async #answerOrThrow<R>(
    call: CallOptions,
    handle: AttemptHandle<T>,
    work: Promise<R>,
    keepOpen: boolean,
  ): Promise<Attempted<R, T>> {
    try {
      const value = await work;
      if (!keepOpen) this.#settle(handle, 'success');
      return { value, handle };
    } catch (thrown) {
      throw this.#failed(call, handle, thrown, false).error;
    }
  }

  /** Classifies what a failed attempt threw and reports it (breaker, span, events, cooling). */
  #failed(call: CallOptions, handle: AttemptHandle<T>, thrown: unknown, last: boolean): AttemptFailure {
    const failure = this.classify(handle, thrown);
    // A last resort that outlived the attempt timeout and then the call's deadline (not an abort
    // by the caller) was as slow as a timed-out attempt: its breaker hears of it as one.
    const attemptTimeoutMs = this.#options.attemptTimeoutMs;
    const slow =
      last &&
      failure.errorClass === 'cancelled' &&
      call.signal?.aborted !== true &&
      attemptTimeoutMs !== undefined &&
      performance.now() - handle.started >= attemptTimeoutMs;
    this.#settle(handle, slow ? 'failure' : failure.errorClass, failure.error);
    return failure;
  }

  /** The typed error and its class for something an attempt threw. */
  classify(handle: AttemptHandle<T>, thrown: unknown): { error: InfergateError; errorClass: ErrorClass } {
    const { callScope, scope } = handle;
    const callSignal = callScope.signal;
    const callOver =
      callSignal?.aborted === true || (callScope.deadline !== undefined && Date.now() >= callScope.deadline);
    if (callOver) {
      const error = callSignal?.aborted === true ? abortError(callSignal) : InfergateError.from(thrown);
      return { error, errorClass: 'cancelled' };
    }
    // The attempt's own timeout (or a stream consumer leaving) aborted it: that reason, typed.
    const own = scope.signal !== undefined && scope.signal !== callSignal && scope.signal.aborted;
    const error = own ? abortError(scope.signal as AbortSignal) : InfergateError.from(thrown);
    return { error, errorClass: classifyError(error) };
  }

  /** Reports an attempt's outcome to its breaker, span, events; cools the target on backpressure. */
  finish(handle: AttemptHandle<T>, outcome: AttemptOutcome, error?: InfergateError): Promise<void> {
    this.#settle(handle, outcome, error);
    return DONE;
  }

  /**
   * `finish`, in the same turn: the breaker counts the outcome at once (and trips or ejects the
   * target now, when this was the failure that says so), so a failed call moves on to the next
   * target without waiting, and a trip is recorded on the attempt's span before the span ends.
   */
  #settle(handle: AttemptHandle<T>, outcome: AttemptOutcome, error?: InfergateError): void {
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
}

/**
 * The candidates less those the call must not use (a hedge's first target): taken out before any
 * pass, so neither the room wait nor `whenAllOpen` can send the call there.
 */
function without<T>(candidates: readonly T[], exclude: ReadonlySet<T> | undefined): readonly T[] {
  if (exclude === undefined || exclude.size === 0) return candidates;
  return candidates.filter((target) => !exclude.has(target));
}
