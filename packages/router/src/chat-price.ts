import { heuristicTokens } from '@infergate/core';
import type { ChatRequest } from '@infergate/llm';

/**
 * Where a chat router reads prices: `PriceCatalog` from @infergate/cost fits as it is (its built-in
 * OpenAI and Anthropic entries, or your own). Only USD per million input and output tokens are read.
 */
export interface PriceSource {
  lookup(query: {
    model: string;
    provider?: string;
    at: number;
  }): { readonly input: number; readonly output: number } | undefined;
}

/** Output tokens assumed for a request without `maxTokens` (the cost package's default). */
const DEFAULT_OUTPUT_TOKENS = 1_024;

/** Input tokens of a chat request on a model (what @infergate/cost's `estimateTokens` counts). */
export type PromptTokenCounter = (request: Pick<ChatRequest, 'model' | 'messages'>) => Promise<number>;

// @infergate/cost is an optional peer: its `estimateTokens` counts OpenAI models with gpt-tokenizer
// (an optional peer of cost's) when that is installed, and everything else with core's padded
// heuristic. It is imported the first time a priced call needs it; a failed import is remembered,
// and every estimate then uses the heuristic.
let costCounter: Promise<PromptTokenCounter | undefined> | undefined;

/** The cost package's token counter, or undefined when @infergate/cost is not installed. */
export function loadCostTokenCounter(): Promise<PromptTokenCounter | undefined> {
  costCounter ??= import('@infergate/cost').then(
    (cost): PromptTokenCounter =>
      async (request) =>
        (await cost.estimateTokens(request)).inputTokens,
    () => undefined,
  );
  return costCounter;
}

/**
 * Input tokens of `request` on each of `models`, counted once per model name: with the tokenizer
 * where `load` gives one (by default @infergate/cost's, exact for OpenAI models when gpt-tokenizer
 * is installed), with core's padded heuristic otherwise.
 */
export async function promptTokens(
  request: ChatRequest,
  models: Iterable<string>,
  load: () => Promise<PromptTokenCounter | undefined> = loadCostTokenCounter,
): Promise<ReadonlyMap<string, number>> {
  const count = await load();
  const tokens = new Map<string, number>();
  for (const model of models) {
    if (tokens.has(model)) continue;
    tokens.set(
      model,
      count === undefined
        ? heuristicTokens(request.messages)
        : await count({ model, messages: request.messages }),
    );
  }
  return tokens;
}

/**
 * A request's estimated price on a model, in USD: `inputTokens` for the prompt (from
 * `promptTokens`; core's padded heuristic, the one the cost package reserves with, when not given)
 * and `maxTokens` for the answer. Undefined when the model has no price.
 */
export function estimateChatCost(
  prices: PriceSource,
  model: string,
  request: ChatRequest,
  inputTokens: number = heuristicTokens(request.messages),
): number | undefined {
  // By model name alone: an OpenAI-compatible server of a priced model costs what the catalog says.
  const entry = prices.lookup({ model, at: Date.now() });
  if (entry === undefined) return undefined;
  const outputTokens = request.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
  return (inputTokens * entry.input + outputTokens * entry.output) / 1_000_000;
}
