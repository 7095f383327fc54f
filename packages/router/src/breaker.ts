import { EventEmitter } from 'node:events';
import { createCallScope, ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import {
  clearLongTimer,
  type LongTimer,
  setLongInterval,
  setLongTimeout,
} from '@infergate/core/internal/long-timer';
import {
  type BreakerSnapshot,
  type BreakerState,
  breakerSnapshotSchema,
  CLOSED,
  openTimeMs,
} from './breaker-state.js';
import type { ResolvedBreakerOptions } from './config.js';
import { acceptBreakerSnapshot } from './internal/accept-breaker-snapshot.js';

/** Answers whether an open target is ready again (Triton ServerReady / ModelReady). */
export type ProbeFunction = (signal: AbortSignal) => Promise<boolean>;

export interface BreakerInit {
  name: string;
  options: ResolvedBreakerOptions;
  /** A saved `toJSON()`; an open state whose time is up restores as half-open. */
  initialState?: BreakerSnapshot | undefined;
  /** Polled while open; `true` moves the breaker to half-open early. */
  probe?: ProbeFunction | undefined;
  /** @default Math.random */
  random?: (() => number) | undefined;
}

export interface BreakerStateChange {
  name: string;
  from: BreakerState;
  to: BreakerState;
}

/** A target taken out of rotation at once because its endpoint is unreachable. */
export interface BreakerEjection {
  name: string;
  /** What showed it: a lost or refused connection, or gateway failures in a row. */
  reason: string;
}

type BreakerListener = ((change: BreakerStateChange) => void) | ((ejection: BreakerEjection) => void);

/** `gateway`: the endpoint could not be reached or answered as a dead gateway would. */
export type FailureKind = 'gateway' | 'other';

/** One admitted call. Report exactly one outcome; later reports are ignored. */
export interface BreakerPermit {
  /** True for a half-open probe (or a forced call while open). */
  readonly probe: boolean;
  success(): Promise<void>;
  /**
   * Counts a failure: may trip the breaker (or re-open it, when a probe). A `gateway` failure (the
   * endpoint could not be reached) also counts toward `consecutiveGatewayFailures`.
   */
  failure(kind?: FailureKind): Promise<void>;
  /** Neither: backpressure, a rejected request, a caller's cancel. */
  neutral(): Promise<void>;
  /**
   * Not counted at all (the target refused the call before sending it): nothing reaches the
   * rolling window and the run of gateway failures is left as it was. A probe's slot is freed
   * without deciding the half-open period.
   */
  release(): Promise<void>;
}

const done = Promise.resolve();

/**
 * The closed state's rolling window of call outcomes: `buckets` counts of calls and failures, the
 * oldest dropped on each `rotate()` (every rollingWindowMs / rollingBuckets). It trips on a failure
 * once the window holds at least `volumeThreshold` calls and failures are more than
 * `errorThresholdPercentage` of them — opossum 9's rule, counted in place: a call's outcome costs
 * two increments, where `CircuitBreaker.fire()` cost a chain of promises and events per call.
 */
class RollingWindow {
  /**
   * Bucket i's calls at 2i and failures at 2i + 1: one array, so counting an outcome touches one
   * array and one line of memory rather than two of each (the router's state is cold between calls).
   */
  readonly #counts: Float64Array;
  /** Index of the current bucket's calls (2 · bucket). */
  #head = 0;

  constructor(buckets: number) {
    this.#counts = new Float64Array(buckets * 2);
  }

  success(): void {
    const head = this.#head;
    this.#counts[head] = (this.#counts[head] as number) + 1;
  }

  /** Counts a failure; true when the window now says trip. */
  failure(volumeThreshold: number, errorThresholdPercentage: number): boolean {
    const head = this.#head;
    const counts = this.#counts;
    counts[head] = (counts[head] as number) + 1;
    counts[head + 1] = (counts[head + 1] as number) + 1;
    let calls = 0;
    let failures = 0;
    for (let index = 0; index < counts.length; index += 2) {
      calls += counts[index] as number;
      failures += counts[index + 1] as number;
    }
    return calls >= volumeThreshold && (failures / calls) * 100 > errorThresholdPercentage;
  }

  /** Drops the oldest bucket and starts a new one. */
  rotate(): void {
    this.#head = (this.#head + 2) % this.#counts.length;
    this.#counts[this.#head] = 0;
    this.#counts[this.#head + 1] = 0;
  }

  /** Forgets every outcome. */
  clear(): void {
    this.#counts.fill(0);
  }
}

/**
 * A circuit breaker for one target: a closed breaker trips on its rolling window's error rate
 * (error percentage over a volume threshold, the rule opossum 9 applies) or at once on
 * `consecutiveGatewayFailures`; the open period grows, is capped and jittered; half-open lets N
 * probes through; each call gets its own AbortSignal; the state exports and restores; an active
 * probe may half-open it early. See docs/decisions/0004-router-breaker.md.
 */
export class Breaker {
  readonly name: string;
  readonly #options: ResolvedBreakerOptions;
  readonly #random: () => number;
  readonly #probe: ProbeFunction | undefined;
  readonly #events = new EventEmitter();
  readonly #window: RollingWindow;
  readonly #rotateTimer: LongTimer | undefined;
  #state: BreakerState = CLOSED;
  /**
   * `#state.kind === 'closed'`, kept beside it: a closed breaker (most calls) admits a call and
   * counts its outcome from its own fields, without reading the state object.
   */
  #closed = true;
  #lastFailureAt: number | undefined;
  #probesInFlight = 0;
  /** Gateway failures since the last success (see `consecutiveGatewayFailures`). */
  #gatewayStreak = 0;
  #probeSuccesses = 0;
  #halfOpenTimer: LongTimer | undefined;
  #probeTimer: LongTimer | undefined;
  #probing = false;
  #disposed = false;

  constructor(init: BreakerInit) {
    this.name = init.name;
    this.#options = init.options;
    this.#random = init.random ?? Math.random;
    this.#probe = init.probe;
    const restored =
      init.initialState === undefined
        ? undefined
        : (acceptBreakerSnapshot(init.initialState) ??
          parseOptions(breakerSnapshotSchema(), init.initialState, `breaker state of '${init.name}'`));
    this.#window = new RollingWindow(init.options.rollingBuckets);
    // The options have no upper bound, nor has a restored halfOpenAt: every timer here takes any delay.
    this.#rotateTimer = setLongInterval(
      () => this.#window.rotate(),
      Math.max(1, Math.floor(init.options.rollingWindowMs / init.options.rollingBuckets)),
    );
    this.#rotateTimer?.unref?.();
    if (restored !== undefined) {
      this.#lastFailureAt = restored.lastFailureAt;
      const state = restored.state as BreakerState;
      if (state.kind === 'open') {
        if (state.halfOpenAt <= Date.now())
          this.#state = { kind: 'half-open', trips: state.trips, since: Date.now() };
        else this.#enterOpen(state);
      } else this.#state = state;
      this.#closed = this.#state.kind === 'closed';
    }
  }

  get state(): BreakerState {
    if (this.#state.kind === 'open' && this.#state.halfOpenAt <= Date.now()) this.#toHalfOpen();
    return this.#state;
  }

  /** When the last counted failure happened (epoch ms). */
  get lastFailureAt(): number | undefined {
    return this.#lastFailureAt;
  }

  /** Milliseconds until an open breaker half-opens (0 unless open). */
  get retryAfterMs(): number {
    const state = this.state;
    return state.kind === 'open' ? Math.max(0, state.halfOpenAt - Date.now()) : 0;
  }

  on(event: 'state-change', listener: (change: BreakerStateChange) => void): this;
  /** The breaker opened because the endpoint is unreachable (see `eject`). */
  on(event: 'eject', listener: (ejection: BreakerEjection) => void): this;
  on(event: 'state-change' | 'eject', listener: BreakerListener): this {
    this.#events.on(event, listener);
    return this;
  }

  off(event: 'state-change', listener: (change: BreakerStateChange) => void): this;
  off(event: 'eject', listener: (ejection: BreakerEjection) => void): this;
  off(event: 'state-change' | 'eject', listener: BreakerListener): this {
    this.#events.off(event, listener);
    return this;
  }

  /**
   * Takes the target out of rotation now: the endpoint is known unreachable (its connection was
   * lost or refused, or gateway failures came in a row). Opens a closed breaker, re-opens a
   * half-open one; an open one stays as it is. Emits 'eject' when it changed the state.
   */
  eject(reason: string): void {
    const kind = this.#state.kind;
    if (kind === 'open') return;
    if (kind === 'closed') this.#tripFromClosed();
    else this.#reopen();
    this.#events.emit('eject', { name: this.name, reason } satisfies BreakerEjection);
  }

  /**
   * The endpoint accepts connections again: an open breaker half-opens now, as after a ready probe,
   * so the next call tests it. Does nothing in any other state.
   */
  reachable(): void {
    if (this.#state.kind === 'open') this.#toHalfOpen();
  }

  /** Admits a call, or returns undefined when open (or half-open with every probe slot taken). */
  acquire(): BreakerPermit | undefined {
    if (this.#closed) return this.#closedPermit();
    const state = this.state;
    if (state.kind === 'closed') return this.#closedPermit();
    if (state.kind === 'half-open' && this.#probesInFlight < this.#options.halfOpenMaxProbes)
      return this.#probePermit();
    return undefined;
  }

  /** Admits a call whatever the state (the router's `least-recently-failed` last resort). */
  forceAcquire(): BreakerPermit {
    return this.acquire() ?? this.#probePermit();
  }

  /**
   * Runs `fn` under the breaker with its own child signal (aborted on `timeoutMs` or when `signal`
   * aborts; never shared with another call). Every error except a caller's cancel counts as a
   * failure; the router classifies errors itself and uses `acquire()`.
   */
  async execute<T>(
    fn: (signal: AbortSignal) => Promise<T>,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<T> {
    const permit = this.acquire();
    if (permit === undefined) {
      throw new InfergateError(ErrorCode.BreakerOpen, `breaker '${this.name}' is open`, {
        retryAfterMs: this.retryAfterMs,
      });
    }
    const scope = createCallScope({ signal: options.signal, timeoutMs: options.timeoutMs, own: true });
    try {
      // `own` scopes always have a signal; the race holds the deadline even if `fn` ignores it.
      const value = await scope.race(fn(scope.signal as AbortSignal));
      await permit.success();
      return value;
    } catch (error) {
      await (options.signal?.aborted ? permit.neutral() : permit.failure());
      throw scope.timedOut() ? scope.signal?.reason : error;
    } finally {
      scope.dispose();
    }
  }

  /** The state to save (see `initialState`). */
  toJSON(): BreakerSnapshot {
    return { version: 1, state: this.state, lastFailureAt: this.#lastFailureAt };
  }

  /** Stops timers and listeners; outcomes reported later count nowhere. */
  dispose(): void {
    this.#disposed = true;
    clearLongTimer(this.#rotateTimer);
    this.#clearOpenTimers();
    this.#events.removeAllListeners();
  }

  #closedPermit(): BreakerPermit {
    return new ClosedPermit(this.#report);
  }

  /**
   * A closed-state permit's outcome, counted when its attempt ends (nothing is held while the call
   * is in flight) and at once: a failure that trips the breaker has opened it before this returns.
   * A neutral outcome counts as a success, which only dilutes the error rate.
   */
  readonly #report = (failed: boolean, kind: FailureKind | undefined): void => {
    if (this.#disposed) return;
    if (failed) {
      this.#lastFailureAt = Date.now();
      if (kind === 'gateway') this.#gatewayStreak += 1;
      // Known dead: out of rotation now, not once the rolling window's failure rate catches up.
      // (The options are read on failures only: a success touches no more of the breaker than it must.)
      const limit = this.#options.consecutiveGatewayFailures;
      if (limit > 0 && this.#gatewayStreak >= limit) {
        this.eject(`${this.#gatewayStreak} gateway failures in a row`);
        return;
      }
    } else if (this.#gatewayStreak !== 0) this.#gatewayStreak = 0;
    // The window counts only while closed: a call admitted before a trip that ends after it
    // decides nothing (a half-open period is decided by its probes alone).
    if (!this.#closed) return;
    if (!failed) this.#window.success();
    else if (this.#window.failure(this.#options.volumeThreshold, this.#options.errorThresholdPercentage))
      this.#tripFromClosed();
  };

  #probePermit(): BreakerPermit {
    this.#probesInFlight += 1;
    const trips = this.#state.trips;
    let reported = false;
    const report = (outcome: 'success' | 'failure' | 'neutral'): Promise<void> => {
      if (reported) return done;
      reported = true;
      this.#probesInFlight -= 1;
      if (outcome === 'failure') this.#lastFailureAt = Date.now();
      // Only a probe of the current half-open period decides it.
      if (this.#state.kind !== 'half-open' || this.#state.trips !== trips) return done;
      if (outcome === 'failure') this.#reopen();
      else if (outcome === 'success') {
        this.#probeSuccesses += 1;
        if (this.#probeSuccesses >= this.#options.halfOpenSuccesses) this.#close();
      }
      return done;
    };
    return {
      probe: true,
      success: () => report('success'),
      failure: () => report('failure'),
      neutral: () => report('neutral'),
      release: () => report('neutral'),
    };
  }

  #transition(to: BreakerState): void {
    const from = this.#state;
    this.#state = to;
    this.#closed = to.kind === 'closed';
    this.#events.emit('state-change', { name: this.name, from, to } satisfies BreakerStateChange);
  }

  #tripFromClosed(): void {
    if (this.#state.kind !== 'closed') return;
    const now = Date.now();
    const { closedAt, trips } = this.#state;
    // Tripping again soon after closing continues the series, so the open time keeps growing.
    const recent = closedAt !== undefined && now - closedAt < this.#options.rollingWindowMs;
    this.#enterOpen(this.#openState(recent ? trips + 1 : 1, now));
  }

  #reopen(): void {
    this.#enterOpen(this.#openState(this.#state.trips + 1, Date.now()));
  }

  #openState(trips: number, now: number): BreakerState & { kind: 'open' } {
    return {
      kind: 'open',
      trips,
      openedAt: now,
      halfOpenAt: now + openTimeMs(trips, this.#options, this.#random),
    };
  }

  #enterOpen(state: BreakerState & { kind: 'open' }): void {
    this.#clearOpenTimers();
    this.#gatewayStreak = 0;
    this.#transition(state);
    this.#halfOpenTimer = setLongTimeout(
      () => this.#toHalfOpen(),
      Math.max(0, state.halfOpenAt - Date.now()),
    );
    this.#halfOpenTimer?.unref?.();
    if (this.#probe !== undefined) {
      this.#probeTimer = setLongInterval(() => void this.#runProbe(), this.#options.probeIntervalMs);
      this.#probeTimer?.unref?.();
    }
  }

  async #runProbe(): Promise<void> {
    const probe = this.#probe;
    if (probe === undefined || this.#probing || this.#state.kind !== 'open') return;
    this.#probing = true;
    const scope = createCallScope({
      timeoutMs: this.#options.probeIntervalMs,
      what: 'the readiness probe',
      own: true,
    });
    try {
      const trips = this.#state.trips;
      const ready = await scope.race(probe(scope.signal as AbortSignal));
      if (ready && this.#state.kind === 'open' && this.#state.trips === trips) this.#toHalfOpen();
    } catch {
      // A failed probe only means "not ready yet".
    } finally {
      scope.dispose();
      this.#probing = false;
    }
  }

  #toHalfOpen(): void {
    if (this.#state.kind !== 'open') return;
    this.#clearOpenTimers();
    this.#probeSuccesses = 0;
    this.#transition({ kind: 'half-open', trips: this.#state.trips, since: Date.now() });
  }

  #close(): void {
    this.#clearOpenTimers();
    this.#gatewayStreak = 0;
    // Forget the failures that tripped it: a fresh window.
    this.#window.clear();
    this.#transition({ kind: 'closed', trips: this.#state.trips, closedAt: Date.now() });
  }

  #clearOpenTimers(): void {
    clearLongTimer(this.#halfOpenTimer);
    clearLongTimer(this.#probeTimer);
    this.#halfOpenTimer = undefined;
    this.#probeTimer = undefined;
  }
}

/** A closed breaker's permit: one small object per call, its outcome reported once. */
class ClosedPermit implements BreakerPermit {
  readonly probe = false;
  #reported = false;
  readonly #report: (failed: boolean, kind: FailureKind | undefined) => void;

  constructor(report: (failed: boolean, kind: FailureKind | undefined) => void) {
    this.#report = report;
  }

  success(): Promise<void> {
    if (!this.#reported) {
      this.#reported = true;
      this.#report(false, undefined);
    }
    return done;
  }

  failure(kind?: FailureKind): Promise<void> {
    if (!this.#reported) {
      this.#reported = true;
      this.#report(true, kind);
    }
    return done;
  }

  neutral(): Promise<void> {
    return this.success();
  }

  release(): Promise<void> {
    this.#reported = true;
    return done;
  }
}
