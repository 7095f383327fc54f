import { type CallOptions, createCallScope, parseOptions } from '@infergate/core';
import { z } from 'zod';
import type { Attribution } from './budget.js';
import type { Reservation } from './budget-ledger.js';
import { attributionOf } from './call-attribution.js';
import type { ChatEstimate, CostTracker } from './cost-tracker.js';
import { finishReservation } from './internal/finish-reservation.js';
import { functionSchema, isCostTracker, trackerSchema } from './internal/tracker-schema.js';
import type { ServiceTier } from './price-schema.js';
import type { TokenUsage } from './token-cost.js';
import type { EstimatableRequest } from './token-estimate.js';

/** The shape of @infergate/llm's ChatModel that cost accounting needs (structural: no dependency). */
export interface CostableChatModel {
  readonly provider: string;
  readonly defaultModel?: string;
  readonly contextWindow?: number;
  // biome-ignore lint/suspicious/noExplicitAny: method parameters are bivariant on purpose so any ChatModel fits
  chat(request: any, options?: any): Promise<{ usage: TokenUsage; model: string }>;
  // biome-ignore lint/suspicious/noExplicitAny: see chat
  chatStream(request: any, options?: any): AsyncIterable<{ type: string; usage?: TokenUsage }>;
}

export interface WithCostOptions {
  /** Prices, budgets and the ledger the calls are charged to. */
  tracker: CostTracker;
  /** Who the call is charged to. @default tenant from CallOptions.tenant, key from API_KEY_CONTEXT */
  attribute?: (request: EstimatableRequest, options: CallOptions | undefined) => Attribution;
  /** Service tier of the request (batch, priority) for the price modifiers. @default 'standard' */
  serviceTier?: (request: EstimatableRequest) => ServiceTier;
}

const optionsSchema = z
  .object({
    model: z.custom<CostableChatModel>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as CostableChatModel).chat === 'function' &&
        typeof (value as CostableChatModel).chatStream === 'function',
      'model must be a ChatModel (chat and chatStream)',
    ),
    tracker: trackerSchema,
    attribute: functionSchema('attribute').optional(),
    serviceTier: functionSchema('serviceTier').optional(),
  })
  .strict();

type Wrapped<M extends CostableChatModel> = Pick<
  M,
  'provider' | 'defaultModel' | 'contextWindow' | 'chat' | 'chatStream'
>;

/**
 * A ChatModel that reserves the estimated cost before each call (BUDGET_EXCEEDED when a hard
 * limit would pass), settles with the response's usage after, and releases on error or abort.
 * Streams settle when the usage event arrives; a stream that ends without one is charged its
 * estimate; a stream abandoned before usage releases its reservation.
 */
export function withCost<M extends CostableChatModel>(model: M, options: WithCostOptions): Wrapped<M>;
/** @deprecated Pass `withCost(model, { tracker, ...options })`; this form is removed in 1.0. */
export function withCost<M extends CostableChatModel>(
  model: M,
  tracker: CostTracker,
  options?: Omit<WithCostOptions, 'tracker'>,
): Wrapped<M>;
export function withCost<M extends CostableChatModel>(
  model: M,
  second: WithCostOptions | CostTracker,
  rest: Omit<WithCostOptions, 'tracker'> = {},
): Wrapped<M> {
  const input = isCostTracker(second) ? { ...rest, tracker: second } : second;
  parseOptions(optionsSchema, { ...input, model }, 'withCost options');
  const options: WithCostOptions = input;
  const { tracker } = options;
  const attribute =
    options.attribute ?? ((request, callOptions) => attributionOf(callOptions, request.model));

  async function begin(request: EstimatableRequest, callOptions: CallOptions | undefined) {
    const named: EstimatableRequest = request.model
      ? request
      : { ...request, model: model.defaultModel ?? '' };
    const serviceTier = options.serviceTier?.(named) ?? 'standard';
    const estimate = await tracker.estimateChat(named, { provider: model.provider, serviceTier });
    const attribution = attribute(named, callOptions);
    const scope = createCallScope({ signal: callOptions?.signal, timeoutMs: callOptions?.timeoutMs });
    try {
      const reservation = await tracker.reserve({
        ...attribution,
        model: attribution.model ?? named.model,
        provider: model.provider,
        estimateUsd: estimate?.usd ?? 0,
        signal: scope.signal,
      });
      return { reservation, serviceTier, model: named.model, estimate };
    } finally {
      scope.dispose();
    }
  }

  const settle = (
    reservation: Reservation,
    usage: TokenUsage,
    answered: string,
    serviceTier: ServiceTier,
    signal: AbortSignal | undefined,
  ) =>
    finishReservation(tracker, reservation, 'settle', () =>
      tracker.settleUsage(reservation, usage, { model: answered, serviceTier, signal }),
    );

  const release = (reservation: Reservation) =>
    finishReservation(tracker, reservation, 'release', () => tracker.release(reservation));

  /**
   * What an answer is charged for: its usage, or, when the provider stated no token counts at all
   * (the adapters then report a usage whose counts are all undefined), the estimate the call
   * reserved, an upper bound, so that a server that never reports usage cannot spend past a budget.
   */
  const chargedUsage = (
    usage: TokenUsage | undefined,
    estimate: ChatEstimate | null | undefined,
  ): TokenUsage =>
    usage !== undefined && (usage.inputTokens !== undefined || usage.outputTokens !== undefined)
      ? usage
      : { inputTokens: estimate?.inputTokens, outputTokens: estimate?.outputTokens };

  const wrapped = {
    provider: model.provider,
    async chat(request: EstimatableRequest, callOptions?: CallOptions) {
      const call = await begin(request, callOptions);
      let response: Awaited<ReturnType<M['chat']>>;
      try {
        response = (await model.chat(request, callOptions)) as Awaited<ReturnType<M['chat']>>;
      } catch (error) {
        await release(call.reservation);
        throw error;
      }
      await settle(
        call.reservation,
        chargedUsage(response.usage, call.estimate),
        call.model,
        call.serviceTier,
        callOptions?.signal,
      );
      return response;
    },
    async *chatStream(request: EstimatableRequest, callOptions?: CallOptions) {
      const call = await begin(request, callOptions);
      let settled = false;
      let completed = false;
      try {
        for await (const event of model.chatStream(request, callOptions)) {
          if (event.type === 'usage' && event.usage && !settled) {
            settled = true;
            await settle(
              call.reservation,
              chargedUsage(event.usage, call.estimate),
              call.model,
              call.serviceTier,
              callOptions?.signal,
            );
          }
          yield event;
        }
        completed = true;
      } finally {
        if (!settled) {
          if (completed) {
            // The provider sent no usage: charge the estimate, an upper bound.
            await settle(
              call.reservation,
              chargedUsage(undefined, call.estimate),
              call.model,
              call.serviceTier,
              callOptions?.signal,
            );
          } else await release(call.reservation);
        }
      }
    },
  };
  if (model.defaultModel !== undefined) Object.assign(wrapped, { defaultModel: model.defaultModel });
  if (model.contextWindow !== undefined) Object.assign(wrapped, { contextWindow: model.contextWindow });
  return wrapped as unknown as Wrapped<M>;
}
