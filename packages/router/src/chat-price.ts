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

/**
 * A request's estimated price on a model, in USD: core's padded character heuristic for the prompt
 * (the one the cost package reserves with) and `maxTokens` for the answer. Only an order between targets rides on it,
 * so a tokenizer's precision buys nothing here; undefined when the model has no price.
 */
export function estimateChatCost(
  prices: PriceSource,
  model: string,
  request: ChatRequest,
): number | undefined {
  // By model name alone: an OpenAI-compatible server of a priced model costs what the catalog says.
  const entry = prices.lookup({ model, at: Date.now() });
  if (entry === undefined) return undefined;
  const inputTokens = heuristicTokens(request.messages);
  const outputTokens = request.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
  return (inputTokens * entry.input + outputTokens * entry.output) / 1_000_000;
}
