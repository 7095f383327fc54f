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
import { classifyError } from './classify.js';
import { type RouterOptions, routerConfigSchema } from './config.js';
import { createBreaker } from './create-breaker.js';
import { readinessProbe } from './readiness-probe.js';
import type { RouteTarget } from './route-engine.js';
import { routedStream } from './routed-stream.js';
import { RouterBase } from './router-base.js';
import { SequencePins, sequenceOf } from './sequence-pins.js';
import { TargetCooling } from './target-cooling.js';
import { TargetEjection } from './target-ejection.js';

interface TritonTarget extends RouteTarget {
  readonly transport: InferTransport;
  /** Watches the target's channel, when it has one (target-ejection.ts). */
  readonly ejection: TargetEjection | undefined;
}

/**
 * A router over Triton endpoints that is itself an InferTransport: use it as a TritonClient's
 * `transport`, or under a batcher. Requests of a stateful sequence stay on the target chosen at START.
 */
export class InferRouter extends RouterBase<TritonTarget> implements InferTransport {
  readonly #pins = new SequencePins();

  constructor(config: RouterOptions) {
    const { targets, ...options } = parseOptions(routerConfigSchema, config, 'router config');
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
      };
    });
    super(list, options);
  }

  async infer(request: InferRequest, options: CallOptions = {}): Promise<InferResponse> {
    const sequence = sequenceOf(request);
    const run = (target: TritonTarget, attemptOptions: CallOptions) =>
      target.transport.infer(request, attemptOptions);
    if (sequence === undefined) return (await this.engine.run(options, run)).value;
    const pinnedName = sequence.start ? undefined : this.#pins.get(sequence.key);
    if (pinnedName === undefined) {
      // START (or a sequence this router has not seen): choose a target, fall back if needed, never retry.
      const { value, handle } = await this.engine.run(options, run, { retries: false });
      if (!sequence.end) this.#pins.pin(sequence.key, handle.target.name);
      return value;
    }
    const pinned = this.engine.targets.get(pinnedName) as TritonTarget;
    try {
      const { value } = await this.engine.run(options, run, { pinned, retries: false });
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
      this.engine,
      options,
      (target, attemptOptions) => target.transport.stream(request, attemptOptions),
      (responses) => ({ responses }),
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
