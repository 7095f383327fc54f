import type { CallScope } from '@infergate/core';
import type { Span } from '@opentelemetry/api';
import type { Breaker, BreakerPermit } from './breaker.js';
import type { LoadStats } from './load-stats.js';
import type { RateLimitWatch } from './rate-limit-watch.js';
import type { TargetCooling } from './target-cooling.js';
import type { TargetEjection } from './target-ejection.js';

/** One destination of a router, whatever kind. */
export interface RouteTarget {
  readonly name: string;
  readonly breaker: Breaker;
  readonly contextWindow: number | undefined;
  /** Backpressure cool-down: skipped while it lasts. */
  readonly cooling: TargetCooling;
  /** The provider account's rate limits as its answers' headers tell (chat targets). */
  readonly rateLimits?: RateLimitWatch | undefined;
  /** Watches the target's channel, when it has one: ejects it, and says when its connection is lost. */
  readonly ejection?: TargetEjection | undefined;
}

export interface ExecutePolicy<T> {
  /** Send only here: no fallback, no retry, no `whenAllOpen` (a pinned sequence). */
  pinned?: T | undefined;
  /** Allow retry passes. @default true */
  retries?: boolean;
  /** The model the call runs: load figures are kept per target and model. @default one figure per target */
  model?: string | undefined;
  /** Keeps calls with the same key on the same member of each group. @default none */
  affinityKey?: string | undefined;
  /** Targets this call must not use (a hedge avoids the first attempt's). @default none */
  exclude?: ReadonlySet<T> | undefined;
  /** Estimated price of the call on a target, in USD (`lowest-cost`); undefined when unknown. */
  costOf?: ((target: T) => number | undefined) | undefined;
}

/** An attempt in progress; a stream finishes it when the stream ends. */
export interface AttemptHandle<T> {
  readonly target: T;
  readonly attempt: number;
  readonly scope: CallScope;
  readonly callScope: CallScope;
  readonly permit: BreakerPermit;
  readonly span: Span;
  readonly started: number;
  /** This target's load figures for the call's model: in flight until finished. */
  readonly load: LoadStats;
  /**
   * Stops the attempt's own timeout (a stream's first answer arrived); the call's deadline stays.
   * The first call with `answered` (the default) records the latency so far.
   */
  stopTimer(answered?: boolean): void;
}

export interface Attempted<R, T> {
  value: R;
  handle: AttemptHandle<T>;
}
