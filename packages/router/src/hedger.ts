import {
  type CallOptions,
  type CallScope,
  createCallScope,
  ErrorCode,
  InfergateError,
  sleep,
} from '@infergate/core';
import type * as Zod from 'zod';
import type { z } from 'zod';
import { RetryBudget } from './retry-budget.js';
import type { RouteCallOptions } from './route-call-options.js';
import type { RouteEngine } from './route-engine.js';
import type { Attempted, AttemptHandle, ExecutePolicy, RouteTarget } from './route-target.js';
import type { RouterEvents } from './router-events.js';

/** The `hedge` option's schema, built with the router's lazily loaded zod (config.ts). */
export function hedgeSchema(z: typeof Zod.z) {
  return z
    .object({
      /**
       * How long the first attempt runs before a second one goes to another target: a fixed delay in
       * ms, or "p95" — the first target's observed 95th percentile latency for the model, a first
       * attempt that lost to its hedge counted at the age it had then (no hedge until it has answered
       * 20 times). @default "p95"
       */
      delay: z.union([z.literal('p95'), z.number().nonnegative().finite()]).default('p95'),
      /**
       * Hedges allowed as a share of hedgeable calls over `windowMs` (0.1: at most 10% extra load).
       * With the "p95" delay about 5% of calls outlast it, slow ones included, so half the budget is
       * room for a burst of slow answers. @default 0.1
       */
      budget: z.number().min(0).max(1).default(0.1),
      /**
       * Sliding window of the hedge budget, in ms of traffic: a lull does not count, so the first
       * calls after one are judged against the calls before it, not left without a budget.
       * @default 10000
       */
      windowMs: z.number().int().positive().default(10_000),
    })
    .strict();
}

// An interface, not a type alias, so that the API reference lists every field.
/** The router's `hedge` option. */
export interface HedgeOptions extends z.input<ReturnType<typeof hedgeSchema>> {}
type ResolvedHedge = z.output<ReturnType<typeof hedgeSchema>>;

type AttemptFunction<R, T> = (target: T, options: CallOptions, handle: AttemptHandle<T>) => Promise<R>;

interface Leg<R, T> {
  scope: CallScope;
  promise: Promise<Attempted<R, T>>;
  settled: boolean;
  result?: { ok: true; value: Attempted<R, T> } | { ok: false; error: unknown };
}

const lost = () =>
  new InfergateError(ErrorCode.Cancelled, 'the other attempt of a hedged call answered first');

/**
 * Hedged requests (Dean and Barroso, "The Tail at Scale"): a call marked `idempotent` whose first
 * attempt has not answered after the hedge delay gets a second attempt on another target; the
 * first answer wins and the other attempt is cancelled. A budget bounds the extra load. A failed
 * hedge — BUDGET_EXCEEDED from a cost-wrapped target included — never fails the call: the first
 * attempt's outcome stands. A stream hedges only until its first chunk (the attempt's answer).
 */
export class Hedger<T extends RouteTarget> {
  readonly #engine: RouteEngine<T>;
  readonly #options: ResolvedHedge | undefined;
  readonly #budget: RetryBudget | undefined;
  readonly #events: RouterEvents | undefined;

  constructor(engine: RouteEngine<T>, options: ResolvedHedge | undefined, events?: RouterEvents) {
    this.#engine = engine;
    this.#options = options;
    this.#events = events;
    this.#budget =
      options === undefined
        ? undefined
        : new RetryBudget({
            ratio: options.budget,
            minPerSecond: 0,
            windowMs: options.windowMs,
            // With no floor of hedges per second (which would break the share at low traffic), a
            // budget that a lull emptied would refuse the first slow calls of every burst.
            skipsIdleTime: true,
          });
  }

  /**
   * `engine.run`, hedged when the router hedges and the call is idempotent. `discard` closes a
   * losing attempt that succeeded anyway (a stream left open).
   */
  run<R>(
    call: RouteCallOptions,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T> = {},
    keepOpen = false,
    discard?: (attempted: Attempted<R, T>) => Promise<void>,
  ): Promise<Attempted<R, T>> {
    const options = this.#options;
    const budget = this.#budget;
    // Not hedged (most calls): the engine's promise itself, no extra async frame.
    if (options === undefined || budget === undefined || !this.hedges(call))
      return this.#engine.run(call, attempt, policy, keepOpen);
    return this.#hedged(call, attempt, policy, keepOpen, discard, options, budget);
  }

  /** Whether `run` hedges this call: the router hedges, the call is idempotent, there is a second target. */
  hedges(call: RouteCallOptions): boolean {
    return (
      this.#options !== undefined &&
      this.#budget !== undefined &&
      call.idempotent === true &&
      this.#engine.targets.size >= 2
    );
  }

  async #hedged<R>(
    call: RouteCallOptions,
    attempt: AttemptFunction<R, T>,
    policy: ExecutePolicy<T>,
    keepOpen: boolean,
    discard: ((attempted: Attempted<R, T>) => Promise<void>) | undefined,
    options: ResolvedHedge,
    budget: RetryBudget,
  ): Promise<Attempted<R, T>> {
    budget.recordRequest();
    const deadline = call.timeoutMs === undefined ? undefined : Date.now() + call.timeoutMs;
    let current: T | undefined;
    let startedAt = 0;
    const primary = this.#leg(call, deadline, policy, keepOpen, (target, attemptOptions, handle) => {
      current = target;
      startedAt = performance.now();
      return attempt(target, attemptOptions, handle);
    });
    const delayMs = this.#delayMs(options, current, policy.model);
    const left = deadline === undefined ? undefined : deadline - Date.now();
    if (delayMs === undefined || (left !== undefined && delayMs >= left))
      return this.#settle(primary, [], keepOpen, discard);
    // The wait ends with the first attempt too, so that no timer outlives a call that answered early.
    const wait = createCallScope({ signal: call.signal, own: true });
    const settled = primary.promise.then(
      () => true,
      () => true,
    );
    settled.then(() => wait.abort());
    const waited = await Promise.race([
      settled,
      sleep(delayMs, wait.signal).then(
        () => false,
        () => true,
      ),
    ]);
    wait.dispose();
    if (waited || primary.settled || current === undefined)
      return this.#settle(primary, [], keepOpen, discard);
    const sent = budget.tryRetry();
    if (this.#events?.listens('hedge') === true)
      this.#events.emit('hedge', { target: current.name, delayMs, outcome: sent ? 'sent' : 'refused' });
    if (!sent) return this.#settle(primary, [], keepOpen, discard);
    const first = current;
    const hedge = this.#leg(call, deadline, { ...policy, exclude: new Set([first]) }, keepOpen, attempt);
    hedge.promise.then(
      () => {
        if (!primary.settled) this.#lostToHedge(first, policy.model, startedAt);
      },
      () => undefined,
    );
    return this.#settle(primary, [hedge], keepOpen, discard);
  }

  #delayMs(options: ResolvedHedge, target: T | undefined, model: string | undefined): number | undefined {
    if (typeof options.delay === 'number') return options.delay;
    if (target === undefined) return undefined;
    return this.#engine.load.get(target.name, model).percentile(95);
  }

  /**
   * A first attempt cancelled because its hedge answered first never records its latency, yet it ran
   * at least this long: it counts as that slow. Left out, the slowest answers of the first target
   * would vanish from its p95 whenever a hedge beats them, the p95 of what is left would be lower,
   * more calls would outlast it and be hedged and left out in turn: the delay would sink until the
   * budget alone stopped the hedges, and a truly slow call would find the budget spent. Counted at
   * its age (never below the delay it outlasted), it keeps the p95 where it is, and "p95" keeps
   * its promise: about 5 % of calls hedged, late ones included.
   */
  #lostToHedge(target: T, model: string | undefined, startedAt: number): void {
    const now = performance.now();
    this.#engine.load.get(target.name, model).record(now - startedAt, now);
  }

  #leg<R>(
    call: RouteCallOptions,
    deadline: number | undefined,
    policy: ExecutePolicy<T>,
    keepOpen: boolean,
    attempt: AttemptFunction<R, T>,
  ): Leg<R, T> {
    const scope = createCallScope({ signal: call.signal, own: true });
    const options: CallOptions = { ...call, signal: scope.signal as AbortSignal };
    if (deadline !== undefined) options.timeoutMs = Math.max(1, deadline - Date.now());
    const leg: Leg<R, T> = {
      scope,
      settled: false,
      promise: this.#engine.run(options, attempt, policy, keepOpen),
    };
    leg.promise.then(
      (value) => {
        leg.settled = true;
        leg.result = { ok: true, value };
      },
      (error: unknown) => {
        leg.settled = true;
        leg.result = { ok: false, error };
      },
    );
    return leg;
  }

  /** The first success among the legs (the primary's error when all fail); the others are cancelled. */
  async #settle<R>(
    primary: Leg<R, T>,
    hedges: Leg<R, T>[],
    keepOpen: boolean,
    discard: ((attempted: Attempted<R, T>) => Promise<void>) | undefined,
  ): Promise<Attempted<R, T>> {
    const legs = [primary, ...hedges];
    const winner = await new Promise<Leg<R, T> | undefined>((resolve) => {
      let pending = legs.length;
      for (const leg of legs) {
        leg.promise.then(
          () => resolve(leg),
          () => {
            pending -= 1;
            if (pending === 0) resolve(undefined);
          },
        );
      }
    });
    for (const leg of legs) {
      if (leg === winner) continue;
      leg.scope.abort(lost());
      // A loser that had already answered (a stream's first chunk) is closed, not leaked.
      leg.promise.then(
        (attempted) => {
          leg.scope.dispose();
          return discard?.(attempted);
        },
        () => leg.scope.dispose(),
      );
    }
    if (winner === undefined) {
      primary.scope.dispose();
      const result = primary.result;
      throw result !== undefined && !result.ok
        ? result.error
        : new InfergateError(ErrorCode.Internal, 'hedged call without result');
    }
    const attempted = await winner.promise;
    if (!keepOpen) {
      winner.scope.dispose();
      return attempted;
    }
    return withScope(attempted, winner.scope);
  }
}

/** The winning attempt, its call scope also releasing the leg's scope when disposed. */
function withScope<R, T>(attempted: Attempted<R, T>, legScope: CallScope): Attempted<R, T> {
  const inner = attempted.handle;
  const callScope: CallScope = {
    ...inner.callScope,
    dispose: () => {
      inner.callScope.dispose();
      legScope.dispose();
    },
  };
  const handle: AttemptHandle<T> = {
    target: inner.target,
    attempt: inner.attempt,
    scope: inner.scope,
    callScope,
    permit: inner.permit,
    span: inner.span,
    started: inner.started,
    load: inner.load,
    stopTimer: (answered) => inner.stopTimer(answered),
  };
  return { value: attempted.value, handle };
}
