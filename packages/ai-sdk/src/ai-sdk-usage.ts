import type { JSONObject, LanguageModelV4FinishReason, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { ChatUsage, FinishReason } from '@infergate/llm';

function minus(total: number | undefined, ...parts: (number | undefined)[]): number | undefined {
  if (total === undefined) return undefined;
  return Math.max(0, total - parts.reduce<number>((sum, part) => sum + (part ?? 0), 0));
}

function jsonObject(value: unknown): JSONObject | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  try {
    // Only what survives JSON is a JSONObject; the raw usage came from JSON, so this is a copy.
    return JSON.parse(JSON.stringify(value)) as JSONObject;
  } catch {
    return undefined;
  }
}

/**
 * infergate's usage in the AI SDK's shape. `inputTokens` of ChatUsage already counts cache reads and
 * writes, so the AI SDK's `noCache` is what is left; reasoning tokens are part of the output, so
 * `text` is the rest. Unknown stays undefined, never 0.
 */
export function toAiSdkUsage(usage: ChatUsage | undefined): LanguageModelV4Usage {
  const raw = jsonObject(usage?.raw);
  return {
    inputTokens: {
      total: usage?.inputTokens,
      noCache: minus(usage?.inputTokens, usage?.cacheReadTokens, usage?.cacheWriteTokens),
      cacheRead: usage?.cacheReadTokens,
      cacheWrite: usage?.cacheWriteTokens,
    },
    outputTokens: {
      total: usage?.outputTokens,
      text: minus(usage?.outputTokens, usage?.reasoningTokens),
      reasoning: usage?.reasoningTokens,
    },
    ...(raw !== undefined ? { raw } : {}),
  };
}

const unifiedReason: Record<FinishReason, LanguageModelV4FinishReason['unified']> = {
  stop: 'stop',
  length: 'length',
  content_filter: 'content-filter',
  tool_calls: 'tool-calls',
  error: 'error',
  other: 'other',
};

export function toAiSdkFinishReason(
  reason: FinishReason,
  raw: string | undefined,
): LanguageModelV4FinishReason {
  return { unified: unifiedReason[reason], raw };
}
