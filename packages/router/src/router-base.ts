import type { Breaker } from './breaker.js';
import type { BreakerSnapshot, BreakerState } from './breaker-state.js';
import type { ResolvedRouterOptions } from './config.js';
import { Hedger } from './hedger.js';
import { createRouteEngine, type RouteEngine, type RouteTarget } from './route-engine.js';
import { type RouterEventMap, RouterEvents } from './router-events.js';
import type { RouterTelemetry } from './router-telemetry.js';

/** Shared by both routers: events, breaker states, close. */
export interface RouterControls {
  readonly events: RouterEvents;
  on<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this;
  off<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this;
  /**
   * Every target's breaker state, by target name: a plain object with an own entry per target
   * (also one named `__proto__`). Read a name with `Object.hasOwn` first: a plain object also
   * answers `constructor`, `toString`, … with Object.prototype's members.
   */
  breakerStates(): Record<string, BreakerState>;
  /**
   * Every target's breaker, saved for `initialState` (e.g. in a serverless function's cache): a
   * plain object with an own entry per target, which JSON.stringify writes whole.
   */
  toJSON(): Record<string, BreakerSnapshot>;
  /** The breaker of one target (inspection, tests). */
  breaker(target: string): Breaker;
  /** Stops breaker timers and telemetry. The targets' transports and models stay open. */
  close(): Promise<void>;
}

/**
 * The control surface both routers share, over one route engine. A router closes only what it
 * made (breakers, telemetry, listeners): the transports and models it was handed belong to the
 * caller, who closes them.
 */
export abstract class RouterBase<T extends RouteTarget> implements RouterControls {
  readonly events = new RouterEvents();
  protected readonly engine: RouteEngine<T>;
  /** `engine.run`, hedged for idempotent calls when the router hedges. */
  protected readonly runner: Hedger<T>;
  readonly #telemetry: RouterTelemetry;
  #closed = false;

  protected constructor(targets: readonly T[], options: ResolvedRouterOptions) {
    ({ engine: this.engine, telemetry: this.#telemetry } = createRouteEngine(targets, options, this.events));
    this.runner = new Hedger(this.engine, options.hedge, this.events);
  }

  on<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this {
    this.events.on(event, listener);
    return this;
  }

  off<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this {
    this.events.off(event, listener);
    return this;
  }

  breaker(target: string): Breaker {
    return this.engine.breaker(target);
  }

  breakerStates(): Record<string, BreakerState> {
    return this.engine.breakerStates();
  }

  toJSON(): Record<string, BreakerSnapshot> {
    return this.engine.snapshot();
  }

  /** Stops breaker timers, telemetry and listeners. Idempotent; the targets stay open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const target of this.engine.targets.values()) target.breaker.dispose();
    this.#telemetry.dispose();
    this.events.removeAll();
  }
}
