import { abortError, type CallOptions, type CallScope, type InfergateError, sleep } from '@infergate/core';
import { type Admission, type AdmissionCall, admissionCall } from './admission.js';
import { type AttemptFailure, contextAfter, endsCall, failedAfter, lastResort } from './attempt-failure.js';
import type { AttemptFunction, AttemptRunner } from './attempt-runner.js';
import type { BreakerPermit } from './breaker.js';
import { availableInMs, leastRecentlyFailed, roomAt, unavailableError } from './candidate-state.js';
import type { ErrorClass } from './classify.js';
import type { ResolvedRouterOptions } from './config.js';
import { retryPassDelay } from './full-jitter-delay.js';
import type { RetryBudget } from './retry-budget.js';
import { NO_TARGETS, pickCandidate, type RoutePass, startPass } from './route-pass.js';
import type { RoutePlanner } from './route-planner.js';
import type { Attempted, AttemptHandle, ExecutePolicy, RouteTarget } from './route-target.js';
import type { RouterEvents } from './router-events.js';
import type { RouterTelemetry } from './router-telemetry.js';

/** Where the engine's synchronous first attempt leaves a call: its first pass, and that attempt's failure. */
export interface LoopResume<T> {
  pass: RoutePass<T>;
  admit: AdmissionCall;
  attempts: number;
  lastError?: InfergateError;
  lastClass?: ErrorClass;
  lastTarget?: string;
  failed?: Set<T> | undefined;
  minContext?: number | undefined;
}

/**
 * The routing loop shared by the Triton and chat routers: walks the planned candidates pass by pass
 * (route-pass.ts), falls back after each failure (attempt-failure.ts), waits briefly for a busy
 * target's room, retries whole passes with backoff under the retry budget, and fails fast when
 * nothing is available. The route engine starts plain calls' first attempt itself and hands the
 * call over here only when it fails. See docs/concepts/routing.md.
 */
export class RoutingLoop<T extends RouteTarget> {
  readonly #planner: RoutePlanner<T>;
  readonly #admission: Admission;
  readonly #attempts: AttemptRunner<T>;
  readonly #budget: RetryBudget;
  readonly #options: ResolvedRouterOptions;
  readonly #random: () => number;
  readonly #telemetry: RouterTelemetry;
  readonly #events: RouterEvents;

  constructor(
    parts: {
      planner: RoutePlanner<T>;
      admission: Admission;
      attempts: AttemptRunner<T>;
      budget: RetryBudget;
      random: () => number;
    },
    options: ResolvedRouterOptions,
    telemetry: RouterTelemetry,
    events: RouterEvents,
  ) {
    this.#planner = parts.planner;
    this.#admission = parts.admission;
    this.#attempts = parts.attempts;
    this.#budget = parts.budget;
    this.#random = parts.random;
    this.#options = options;
    this.#telemetry = telemetry;
    this.#events = events;
  }

  /**
   * Routes a call until an attempt succeeds (left open with `keepOpen`) or the call must fail; with
   * `resume`, carries on the first pass the engine began.
   */
  async run<R>(
    call: CallOptions,
    callScope: CallScope,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T>,
    keepOpen: boolean,
    resume?: LoopResume<T>,
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
    /** A pass the engine began (its first attempt already made): carried on from where it stopped. */
    let resumed = resume?.pass;
    for (;;) {
      const pass =
        resumed ??
        startPass(
          this.#planner,
          this.#admission,
          policy,
          admit,
          callScope,
          failed,
          minContext,
          allowLost,
          firstPassAt ?? Date.now(),
        );
      resumed = undefined;
      firstPassAt = undefined;
      const { candidates, budgetMs, skipLost } = pass;
      for (;;) {
        const target = pickCandidate(pass, this.#admission, policy, admit, minContext);
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
        const { handle, work } = this.#attempts.start(
          call,
          callScope,
          target,
          permit,
          attempts,
          attempt,
          keepOpen,
          policy.model,
          last,
        );
        let failure: AttemptFailure;
        try {
          const value = await work;
          if (!keepOpen) this.#attempts.settle(handle, 'success');
          return { value, handle };
        } catch (thrown) {
          failure = this.#attempts.failed(call, handle, thrown, last);
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
      const room = pinned === undefined ? roomAt(candidates, failed ?? NO_TARGETS, minContext) : undefined;
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
            const { handle, work } = this.#attempts.start(
              call,
              callScope,
              target,
              permit,
              attempts + 1,
              attempt,
              keepOpen,
              policy.model,
              false,
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
      if (!keepOpen) this.#attempts.settle(handle, 'success');
      return { value, handle };
    } catch (thrown) {
      throw this.#attempts.failed(call, handle, thrown, false).error;
    }
  }
}
