import type { CallScope } from '@infergate/core';
import type { Span } from '@opentelemetry/api';
import type { Breaker, BreakerPermit } from './breaker.js';
import type { TargetCooling } from './target-cooling.js';

/** One destination of a router, whatever kind. */
export interface RouteTarget {
  readonly name: string;
  readonly breaker: Breaker;
  readonly contextWindow: number | undefined;
  /** Backpressure cool-down: skipped while it lasts. */
  readonly cooling: TargetCooling;
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
  readonly scope: CallScope;
  readonly callScope: CallScope;
  readonly permit: BreakerPermit;
  readonly span: Span;
  readonly started: number;
  /** Stops the attempt's own timeout (a stream's first answer arrived); the call's deadline stays. */
  stopTimer(): void;
}

export interface Attempted<R, T> {
  value: R;
  handle: AttemptHandle<T>;
}
