import { EventEmitter } from 'node:events';
import type { InfergateError } from '@infergate/core';
import type { BreakerState } from './breaker-state.js';
import type { ErrorClass } from './classify.js';

export type AttemptOutcome = 'success' | ErrorClass;

export interface AttemptEvent {
  target: string;
  /** 1 for the call's first attempt. */
  attempt: number;
  outcome: AttemptOutcome;
  durationMs: number;
  error?: InfergateError;
}

export interface FallbackEvent {
  /** The target that failed or was skipped. */
  from: string;
  /** The target tried next. */
  to: string;
  reason: ErrorClass;
  error: InfergateError;
}

export interface BreakerStateEvent {
  target: string;
  from: BreakerState;
  to: BreakerState;
}

/** A hedgeable call whose first attempt had not answered after the hedge delay. */
export interface HedgeEvent {
  /** The first attempt's target. */
  target: string;
  /** The delay this call waited: the fixed `hedge.delay`, or the target's p95 when the call began. */
  delayMs: number;
  /** `sent`: a second attempt went out; `refused`: the budget was spent, the first attempt runs alone. */
  outcome: 'sent' | 'refused';
}

export interface RouterEventMap {
  attempt: [AttemptEvent];
  hedge: [HedgeEvent];
  fallback: [FallbackEvent];
  'breaker-state': [BreakerStateEvent];
}

/** The events a router emits; a typed face over Node's EventEmitter. */
export class RouterEvents {
  readonly #emitter = new EventEmitter();
  /**
   * Whether any listener was ever added: a router nobody listens to (most) answers `listens` from
   * this field alone, without reaching into the emitter's tables on every call.
   */
  #anyListener = false;

  on<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this {
    this.#emitter.on(event, listener as (...args: unknown[]) => void);
    this.#anyListener = true;
    return this;
  }

  off<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this {
    this.#emitter.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  /** True when someone listens (so the hot path skips building events nobody reads). */
  listens(event: keyof RouterEventMap): boolean {
    return this.#anyListener && this.#emitter.listenerCount(event) > 0;
  }

  emit<K extends keyof RouterEventMap>(event: K, ...args: RouterEventMap[K]): void {
    this.#emitter.emit(event, ...args);
  }

  removeAll(): void {
    this.#emitter.removeAllListeners();
  }
}
