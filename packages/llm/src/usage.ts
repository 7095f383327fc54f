import type { ChatUsage } from './types.js';

/** Usage with every count unknown. */
export function unknownUsage(raw: unknown = undefined): ChatUsage {
  return {
    inputTokens: undefined,
    outputTokens: undefined,
    cacheReadTokens: undefined,
    cacheWriteTokens: undefined,
    reasoningTokens: undefined,
    raw,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** OpenAI Chat Completions `usage` (also vLLM and other OpenAI-compatible servers). */
export interface OpenAIUsageWire {
  prompt_tokens?: number | null | undefined;
  completion_tokens?: number | null | undefined;
  prompt_tokens_details?: { cached_tokens?: number | null | undefined } | null | undefined;
  completion_tokens_details?: { reasoning_tokens?: number | null | undefined } | null | undefined;
}

/**
 * OpenAI: `prompt_tokens` already includes cached tokens; `cached_tokens` are the cache reads;
 * reasoning tokens are part of `completion_tokens`. OpenAI reports no cache writes.
 */
export function normalizeOpenAIUsage(usage: OpenAIUsageWire | null | undefined): ChatUsage {
  if (usage === null || usage === undefined) return unknownUsage(usage ?? undefined);
  return {
    inputTokens: count(usage.prompt_tokens),
    outputTokens: count(usage.completion_tokens),
    cacheReadTokens: count(usage.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: undefined,
    reasoningTokens: count(usage.completion_tokens_details?.reasoning_tokens),
    raw: usage,
  };
}

/** Anthropic Messages `usage` (in a message, in `message_start` or in `message_delta`). */
export interface AnthropicUsageWire {
  input_tokens?: number | null | undefined;
  output_tokens?: number | null | undefined;
  cache_read_input_tokens?: number | null | undefined;
  cache_creation_input_tokens?: number | null | undefined;
}

/**
 * Anthropic: `input_tokens` excludes cached tokens, so the total input is input + cache reads +
 * cache writes (the OpenTelemetry convention). Anthropic reports no separate reasoning count.
 */
export function normalizeAnthropicUsage(usage: AnthropicUsageWire | null | undefined): ChatUsage {
  if (usage === null || usage === undefined) return unknownUsage(usage ?? undefined);
  const uncached = count(usage.input_tokens);
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  return {
    inputTokens: uncached === undefined ? undefined : uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    outputTokens: count(usage.output_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: undefined,
    raw: usage,
  };
}

/**
 * Anthropic streams usage in two parts: `message_start` (input, cache, a first output count) and
 * `message_delta` (cumulative output; newer API versions repeat the input fields). Later fields win.
 */
export function mergeAnthropicUsage(
  start: AnthropicUsageWire | undefined,
  delta: AnthropicUsageWire | undefined,
): AnthropicUsageWire | undefined {
  if (start === undefined) return delta;
  if (delta === undefined) return start;
  const merged: Record<string, unknown> = { ...start };
  for (const [key, value] of Object.entries(delta))
    if (value !== null && value !== undefined) merged[key] = value;
  return merged as AnthropicUsageWire;
}
