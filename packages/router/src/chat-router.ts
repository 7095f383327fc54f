import { parseOptions } from '@infergate/core';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, ChatStreamEvent } from '@infergate/llm';
import { affinityKeyOf } from './affinity.js';
import { estimateChatCost, type PriceSource, promptTokens } from './chat-price.js';
import { ChatRouterMetrics } from './chat-router-metrics.js';
import { type ChatRouterOptions, chatRouterConfigSchema } from './config.js';
import { createBreaker } from './create-breaker.js';
import { acceptChatRouterOptions } from './internal/accept-router-options.js';
import type { RouteCallOptions } from './route-call-options.js';
import type { ExecutePolicy, RouteTarget } from './route-engine.js';
import { routedStream } from './routed-stream.js';
import { RouterBase } from './router-base.js';
import { TargetCooling } from './target-cooling.js';

interface ChatTarget extends RouteTarget {
  readonly model: ChatModel;
  readonly modelName: string | undefined;
  readonly cost: number | undefined;
}

function requestFor(target: ChatTarget, request: ChatRequest): ChatRequest {
  const model = target.modelName ?? target.model.defaultModel;
  return model === undefined || model === request.model ? request : { ...request, model };
}

/** What a chat stream had produced when its target failed (in `details.partial`). */
export interface ChatStreamPartial {
  text: string;
  events: readonly ChatStreamEvent[];
}

/**
 * A router over chat backends that is itself a ChatModel (`provider` "router"): OpenAI → Anthropic
 * on 429/5xx, a Triton-hosted LLM → hosted provider, context-length fallback to a larger window.
 */
export class ChatRouter extends RouterBase<ChatTarget> implements ChatModel {
  readonly provider = 'router';
  /** The largest window among the targets, when every target states one. */
  readonly contextWindow?: number;
  readonly #metrics: ChatRouterMetrics;
  readonly #prices: PriceSource | undefined;
  readonly #affinityKey:
    | ((request: ChatRequest, options: RouteCallOptions) => string | undefined)
    | undefined;

  constructor(config: ChatRouterOptions) {
    // Valid options are read without loading zod (decision 0025); the schema words any error.
    const { targets, prices, ...options } =
      acceptChatRouterOptions(config) ?? parseOptions(chatRouterConfigSchema(), config, 'chat router config');
    const list: ChatTarget[] = targets.map((target) => ({
      name: target.name,
      model: target.model,
      modelName: target.modelName,
      breaker: createBreaker(target.name, options, target.breaker),
      contextWindow: target.contextWindow ?? target.model.contextWindow,
      cooling: new TargetCooling(),
      cost: target.cost,
      rateLimits: target.rateLimits,
    }));
    super(list, options);
    this.#metrics = new ChatRouterMetrics(options.tracing, options.name);
    const windows = list.map((target) => target.contextWindow);
    if (windows.every((window) => window !== undefined)) this.contextWindow = Math.max(...windows);
    this.#prices = prices;
    this.#affinityKey = options.affinity.key;
  }

  /**
   * The call's policy: its price on each target (a target's `cost`, else the price list's estimate
   * with the prompt's `tokens` on that target's model).
   */
  #policy(
    request: ChatRequest,
    options: RouteCallOptions,
    tokens?: ReadonlyMap<string, number>,
  ): ExecutePolicy<ChatTarget> {
    const prices = this.#prices;
    return {
      affinityKey: affinityKeyOf(request, options, this.#affinityKey),
      costOf: (target) => {
        if (target.cost !== undefined || prices === undefined) return target.cost;
        const model = requestFor(target, request).model;
        return estimateChatCost(prices, model, request, tokens?.get(model));
      },
    };
  }

  /** The policy once the prompt is counted (a tokenizer, when installed) for the targets priced by the list. */
  async #pricedPolicy(request: ChatRequest, options: RouteCallOptions): Promise<ExecutePolicy<ChatTarget>> {
    if (this.#prices === undefined) return this.#policy(request, options);
    const models: string[] = [];
    for (const target of this.engine.targets.values())
      if (target.cost === undefined) models.push(requestFor(target, request).model);
    return this.#policy(request, options, await promptTokens(request, models));
  }

  async chat(request: ChatRequest, options: ChatCallOptions & RouteCallOptions = {}): Promise<ChatResponse> {
    return this.#metrics.chat(request.model, async () => {
      const { value } = await this.runner.run(
        options,
        (target, attemptOptions) => target.model.chat(requestFor(target, request), attemptOptions),
        await this.#pricedPolicy(request, options),
      );
      return value;
    });
  }

  chatStream(
    request: ChatRequest,
    options: ChatCallOptions & RouteCallOptions = {},
  ): AsyncIterable<ChatStreamEvent> {
    const open = (policy: ExecutePolicy<ChatTarget>) =>
      routedStream(
        this.engine,
        this.runner,
        options,
        (target, attemptOptions) => target.model.chatStream(requestFor(target, request), attemptOptions),
        (events): ChatStreamPartial => ({
          text: events.map((event) => (event.type === 'text-delta' ? event.text : '')).join(''),
          events,
        }),
        policy,
      );
    const events =
      this.#prices === undefined
        ? open(this.#policy(request, options))
        : (async function* (priced: () => Promise<ExecutePolicy<ChatTarget>>) {
            yield* open(await priced());
          })(() => this.#pricedPolicy(request, options));
    return this.#metrics.stream(request.model, events);
  }
}

/** Validates `config` (INVALID_ARGUMENT on a bad one) and builds a chat router. */
export function createChatRouter(config: ChatRouterOptions): ChatRouter {
  return new ChatRouter(config);
}
