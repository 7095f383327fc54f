import { ErrorCode, InfergateError } from '@infergate/core';
import type { ChatMessage, ChatRequest, ChatUsage, FinishReason } from '@infergate/llm';
import { z } from 'zod';

// OpenAI Chat Completions as clients send it. Fields this gateway cannot honour (tools, n > 1,
// audio, images) are refused with 400 rather than silently dropped; sampling knobs the chat
// interface has no slot for (top_p, seed, user, …) are ignored, as many compatible servers do.
const textPart = z.object({ type: z.literal('text'), text: z.string() });
const messageSchema = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(textPart)]).nullable(),
});

export const chatCompletionBodySchema = z.object({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1, 'messages must not be empty'),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  n: z.literal(1).nullable().optional(),
  tools: z.array(z.unknown()).max(0, 'tools are not supported by this endpoint').optional(),
});

export type ChatCompletionBody = z.output<typeof chatCompletionBodySchema>;

/** A schema failure as OpenAI reports it: 400 naming the parameter. */
export function parseChatCompletionBody(body: unknown): ChatCompletionBody {
  const result = chatCompletionBodySchema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue?.path.join('.') ?? '';
  throw new InfergateError(
    ErrorCode.InvalidArgument,
    `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid'}`,
    {
      details: { param: param || null },
    },
  );
}

function messageOf(message: ChatCompletionBody['messages'][number]): ChatMessage {
  const content =
    typeof message.content === 'string'
      ? message.content
      : (message.content ?? []).map((part) => part.text).join('');
  // "developer" is OpenAI's newer name for system instructions.
  return { role: message.role === 'developer' ? 'system' : message.role, content };
}

export function chatRequestOf(body: ChatCompletionBody): ChatRequest {
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
  return {
    model: body.model,
    messages: body.messages.map(messageOf),
    ...(maxTokens != null ? { maxTokens } : {}),
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(stop != null ? { stop } : {}),
  };
}

/** OpenAI's `usage`; undefined when nothing is known (unknown counts are not reported as 0 alone). */
export function usageWire(usage: ChatUsage | undefined) {
  if (usage === undefined || (usage.inputTokens === undefined && usage.outputTokens === undefined))
    return undefined;
  const prompt = usage.inputTokens ?? 0;
  const completion = usage.outputTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(usage.cacheReadTokens !== undefined
      ? { prompt_tokens_details: { cached_tokens: usage.cacheReadTokens } }
      : {}),
    ...(usage.reasoningTokens !== undefined
      ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }
      : {}),
  };
}

/** OpenAI has no "error"/"other" finish reason; a reply that ended without one reads as "stop". */
export function finishReasonWire(reason: FinishReason): 'stop' | 'length' | 'content_filter' | 'tool_calls' {
  return reason === 'length' || reason === 'content_filter' || reason === 'tool_calls' ? reason : 'stop';
}

export interface CompletionHead {
  id: string;
  created: number;
  model: string;
}

export function completionWire(
  head: CompletionHead,
  text: string,
  finishReason: FinishReason,
  usage: ChatUsage | undefined,
) {
  const wireUsage = usageWire(usage);
  return {
    id: head.id,
    object: 'chat.completion' as const,
    created: head.created,
    model: head.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: text, refusal: null },
        logprobs: null,
        finish_reason: finishReasonWire(finishReason),
      },
    ],
    ...(wireUsage ? { usage: wireUsage } : {}),
  };
}

/** One `chat.completion.chunk`; `usage` is null on every chunk but the last when usage was asked for. */
export function chunkWire(
  head: CompletionHead,
  delta: { role?: 'assistant'; content?: string },
  finishReason: FinishReason | null,
  includeUsage: boolean,
) {
  return {
    id: head.id,
    object: 'chat.completion.chunk' as const,
    created: head.created,
    model: head.model,
    choices: [
      {
        index: 0,
        delta,
        logprobs: null,
        finish_reason: finishReason === null ? null : finishReasonWire(finishReason),
      },
    ],
    ...(includeUsage ? { usage: null } : {}),
  };
}

/** The extra last chunk of `stream_options.include_usage`: no choices, the whole call's usage. */
export function usageChunkWire(head: CompletionHead, usage: ChatUsage | undefined) {
  return {
    id: head.id,
    object: 'chat.completion.chunk' as const,
    created: head.created,
    model: head.model,
    choices: [],
    usage: usageWire(usage) ?? null,
  };
}
