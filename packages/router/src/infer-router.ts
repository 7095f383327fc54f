import {
  type CallOptions,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  isConnectivitySource,
  parseOptions,
} from '@infergate/core';
import { affinityKeyOf } from './affinity.js';
import { classifyError } from './classify.js';
import { type RouterOptions, routerConfigSchema } from './config.js';
import { createBreaker } from './create-breaker.js';
import { acceptRouterOptions } from './internal/accept-router-options.js';
import { readinessProbe } from './readiness-probe.js';
import type { RouteCallOptions } from './route-call-options.js';
import type { RouteTarget } from './route-engine.js';
import { routedStream } from './routed-stream.js';
import { RouterBase } from './router-base.js';
import { type SequenceFlags, SequencePins, sequenceOf } from './sequence-pins.js';
import { TargetCooling } from './target-cooling.js';
import { TargetEjection } from './target-ejection.js';

interface TritonTarget extends RouteTarget {
  readonly transport: InferTransport;
  readonly cost: number | undefined;
}

const costOf = (target: TritonTarget) => target.cost;
const answerOf = <R>(attempted: { value: R }): R => attempted.value;

/**
 * A router over Triton endpoints that is itself an InferTransport: use it as a TritonClient's
 * `transport`, or under a batcher. Requests of a stateful sequence stay on the target chosen at START.
 */
export class InferRouter extends RouterBase<TritonTarget> implements InferTransport {
  readonly #pins = new SequencePins();
  /** Whether the router hedges at all: one that does not (most) asks its hedger nothing per call. */
  readonly #hedging: boolean;
  readonly #affinityKey:
    | ((request: InferRequest, options: RouteCallOptions) => string | undefined)
    | undefined;

  constructor(config: RouterOptions) {
    // Valid options are read without loading zod (decision 0025); the schema words any error.
    const { targets, ...options } =
      acceptRouterOptions(config) ?? parseOptions(routerConfigSchema(), config, 'router config');
    const list: TritonTarget[] = targets.map((target) => {
      const probe =
        target.probe === undefined
          ? undefined
          : typeof target.probe === 'function'
            ? target.probe
            : readinessProbe(target.probe.client, target.probe.model);
      const breaker = createBreaker(target.name, options, target.breaker, probe);
      const transport = target.transport;
      // failover: watch the target's channel, if any (see target-ejection.ts).
      const source = target.connectivity ?? (isConnectivitySource(transport) ? transport : undefined);
      return {
        name: target.name,
        transport,
        breaker,
        contextWindow: undefined,
        cooling: new TargetCooling(),
        ejection: source === undefined ? undefined : new TargetEjection(breaker, source),
        cost: target.cost,
      };
    });
    super(list, options);
    this.#hedging = options.hedge !== undefined;
    this.#affinityKey = options.affinity.key;
  }

  infer(request: InferRequest, options: RouteCallOptions = {}): Promise<InferResponse> {
    // Not an async function: a call outside a sequence (most calls) is the runner's promise and one
    // `then`, with no async frame of its own; what throws here is still a rejection.
    try {
      const sequence = sequenceOf(request);
      const run = (target: TritonTarget, attemptOptions: CallOptions) =>
        target.transport.infer(request, attemptOptions);
      if (sequence !== undefined) return this.#inSequence(request, options, sequence, run);
      const affinityKey = affinityKeyOf(request, options, this.#affinityKey);
      const policy = { model: request.model, costOf, affinityKey };
      // Not hedged (most calls): the engine's answer itself, without a result object to unwrap.
      if (!this.#hedging || !this.runner.hedges(options)) return this.engine.runValue(options, run, policy);
      return this.runner.run(options, run, policy).then(answerOf);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A request of a stateful sequence: START picks a target, the rest stay on it. */
  async #inSequence(
    request: InferRequest,
    options: RouteCallOptions,
    sequence: SequenceFlags,
    run: (target: TritonTarget, attemptOptions: CallOptions) => Promise<InferResponse>,
  ): Promise<InferResponse> {
    const pinnedName = sequence.start ? undefined : this.#pins.get(sequence.key);
    if (pinnedName === undefined) {
      // START (or a sequence this router has not seen): the sequence's affinity home (rendezvous
      // hashing on its id, spilling over when that target is down or overloaded), never retried.
      // Pinning then keeps it there: a sequence's state lives on one target.
      const { value, handle } = await this.engine.run(options, run, {
        retries: false,
        model: request.model,
        costOf,
        affinityKey: sequence.key,
      });
      if (!sequence.end) this.#pins.pin(sequence.key, handle.target.name);
      return value;
    }
    const pinned = this.engine.targets.get(pinnedName) as TritonTarget;
    try {
      const { value } = await this.engine.run(options, run, { pinned, retries: false, model: request.model });
      if (sequence.end) this.#pins.release(sequence.key);
      return value;
    } catch (thrown) {
      const error = thrown as InfergateError;
      const errorClass = options.signal?.aborted ? 'cancelled' : classifyError(error);
      // Busy, a bad request, or refused before sending (deadline too close): the sequence still
      // lives on its target; the caller may send again.
      if (errorClass === 'backpressure' || errorClass === 'reject' || errorClass === 'too-late') throw error;
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

  stream(request: InferRequest, options: RouteCallOptions = {}): AsyncIterable<InferResponse> {
    return routedStream(
      this.engine,
      this.runner,
      options,
      (target, attemptOptions) => target.transport.stream(request, attemptOptions),
      (responses) => ({ responses }),
      { model: request.model, costOf, affinityKey: affinityKeyOf(request, options, this.#affinityKey) },
    );
  }

  /** Stops watching the targets' channels, then what every router stops (breakers, telemetry). */
  override async close(): Promise<void> {
    for (const target of this.engine.targets.values()) target.ejection?.dispose();
    await super.close();
  }

  /** Sequences pinned right now. */
  get pinnedSequences(): number {
    return this.#pins.size;
  }
}

/** Validates `options` (INVALID_ARGUMENT on a bad one) and builds a router over Triton endpoints. */
export function createInferRouter(options: RouterOptions): InferRouter {
  return new InferRouter(options);
}

/** @deprecated Use `createInferRouter` (the same function). */
export const createRouter: (options: RouterOptions) => InferRouter = createInferRouter;
