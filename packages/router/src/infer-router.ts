import {
  type CallOptions,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  parseOptions,
} from '@infergate/core';
import type { Breaker } from './breaker.js';
import type { BreakerSnapshot, BreakerState } from './breaker-state.js';
import { classifyError } from './classify.js';
import { type ResolvedRouterConfig, type RouterOptions, routerConfigSchema } from './config.js';
import { createBreaker } from './create-breaker.js';
import { readinessProbe } from './readiness-probe.js';
import { createRouteEngine, type RouteEngine, type RouteTarget } from './route-engine.js';
import { routedStream } from './routed-stream.js';
import { type RouterEventMap, RouterEvents } from './router-events.js';
import type { RouterTelemetry } from './router-telemetry.js';
import { SequencePins, sequenceOf } from './sequence-pins.js';
import { TargetCooling } from './target-cooling.js';

interface TritonTarget extends RouteTarget {
  readonly transport: InferTransport;
}

/** Shared by both routers: events, breaker states, close. */
export interface RouterControls {
  readonly events: RouterEvents;
  on<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this;
  off<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this;
  /** Every target's breaker state, by target name. */
  breakerStates(): Record<string, BreakerState>;
  /** Every target's breaker, saved for `initialState` (e.g. in a serverless function's cache). */
  toJSON(): Record<string, BreakerSnapshot>;
  /** The breaker of one target (inspection, tests). */
  breaker(target: string): Breaker;
}

/**
 * A router over Triton endpoints that is itself an InferTransport: use it as a TritonClient's
 * `transport`, or under a batcher. Requests of a stateful sequence stay on the target chosen at START.
 */
export class InferRouter implements InferTransport, RouterControls {
  readonly events = new RouterEvents();
  readonly #engine: RouteEngine<TritonTarget>;
  readonly #telemetry: RouterTelemetry;
  readonly #pins = new SequencePins();
  readonly #owned: readonly InferTransport[];

  constructor(config: RouterOptions) {
    const resolved: ResolvedRouterConfig = parseOptions(routerConfigSchema, config, 'router config');
    const { targets, ...options } = resolved;
    const list: TritonTarget[] = targets.map((target) => {
      const probe =
        target.probe === undefined
          ? undefined
          : typeof target.probe === 'function'
            ? target.probe
            : readinessProbe(target.probe.client, target.probe.model);
      return {
        name: target.name,
        transport: target.transport,
        breaker: createBreaker(target.name, options, target.breaker, probe),
        contextWindow: undefined,
        cooling: new TargetCooling(),
      };
    });
    this.#owned = list.map((target) => target.transport);
    ({ engine: this.#engine, telemetry: this.#telemetry } = createRouteEngine(list, options, this.events));
  }

  on<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this {
    this.events.on(event, listener);
    return this;
  }

  off<K extends keyof RouterEventMap>(event: K, listener: (...args: RouterEventMap[K]) => void): this {
    this.events.off(event, listener);
    return this;
  }

  async infer(request: InferRequest, options: CallOptions = {}): Promise<InferResponse> {
    const sequence = sequenceOf(request);
    const run = (target: TritonTarget, attemptOptions: CallOptions) =>
      target.transport.infer(request, attemptOptions);
    if (sequence === undefined) return (await this.#engine.run(options, run)).value;
    const pinnedName = sequence.start ? undefined : this.#pins.get(sequence.key);
    if (pinnedName === undefined) {
      // START (or a sequence this router has not seen): choose a target, fall back if needed, never retry.
      const { value, handle } = await this.#engine.run(options, run, { retries: false });
      if (!sequence.end) this.#pins.pin(sequence.key, handle.target.name);
      return value;
    }
    const pinned = this.#engine.targets.get(pinnedName) as TritonTarget;
    try {
      const { value } = await this.#engine.run(options, run, { pinned, retries: false });
      if (sequence.end) this.#pins.release(sequence.key);
      return value;
    } catch (thrown) {
      const error = thrown as InfergateError;
      const errorClass = options.signal?.aborted ? 'cancelled' : classifyError(error);
      // Busy or a bad request: the sequence still lives on its target; the caller may send again.
      if (errorClass === 'backpressure' || errorClass === 'reject') throw error;
      this.#pins.release(sequence.key);
      throw new InfergateError(
        ErrorCode.Aborted,
        `sequence pinned to '${pinnedName}' broke (${error.code}); restart the sequence — it never moves mid-way`,
        {
          cause: error,
          retryable: false,
          model: request.model,
          details: { sequenceTarget: pinnedName, sequenceError: error.code },
        },
      );
    }
  }

  stream(request: InferRequest, options: CallOptions = {}): AsyncIterable<InferResponse> {
    return routedStream(
      this.#engine,
      options,
      (target, attemptOptions) => target.transport.stream(request, attemptOptions),
      (responses) => ({ responses }),
    );
  }

  /** Sequences pinned right now. */
  get pinnedSequences(): number {
    return this.#pins.size;
  }

  breaker(target: string): Breaker {
    return this.#engine.breaker(target);
  }

  breakerStates(): Record<string, BreakerState> {
    return this.#engine.breakerStates();
  }

  toJSON(): Record<string, BreakerSnapshot> {
    return this.#engine.snapshot();
  }

  /** Stops breaker timers and telemetry, and closes every target transport. */
  async close(): Promise<void> {
    for (const target of this.#engine.targets.values()) target.breaker.dispose();
    this.#telemetry.dispose();
    this.events.removeAll();
    await Promise.all(this.#owned.map((transport) => transport.close?.()));
  }
}

/** Validates `options` (INVALID_ARGUMENT on a bad one) and builds a router over Triton endpoints. */
export function createInferRouter(options: RouterOptions): InferRouter {
  return new InferRouter(options);
}

/** @deprecated Use `createInferRouter` (the same function). */
export const createRouter: (options: RouterOptions) => InferRouter = createInferRouter;
