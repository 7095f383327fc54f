import { z } from 'zod';

/**
 * The parts of OpenAI's Chat Completions wire format the adapters read (from the openai-openapi
 * spec: CreateChatCompletionResponse, CreateChatCompletionStreamResponse, CompletionUsage). Loose
 * where OpenAI-compatible servers differ: unknown fields pass, ids and models may be missing.
 */

const count = z.number().int().nonnegative().nullish();

export const openAIUsageSchema = z.looseObject({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: z.looseObject({ cached_tokens: count }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: count }).nullish(),
});

/** The fields a whole completion and a stream chunk share. */
const completionFields = {
  id: z.string().nullish(),
  object: z.string().nullish(),
  model: z.string().nullish(),
  usage: openAIUsageSchema.nullish(),
};

/** The fields every choice has, whole or streamed. */
const choiceFields = {
  index: z.number().int().nullish(),
  finish_reason: z.string().nullish(),
};

/** An assistant message: whole (`message`), or the piece of it a chunk carries (`delta`). */
const messageSchema = z.object({
  role: z.string().nullish(),
  content: z.string().nullish(),
  refusal: z.string().nullish(),
});

export const openAIChatResponseSchema = z.object({
  ...completionFields,
  choices: z.array(z.object({ ...choiceFields, message: messageSchema })),
});

export const openAIChatChunkSchema = z.object({
  ...completionFields,
  choices: z.array(z.object({ ...choiceFields, delta: messageSchema.nullish() })),
});

/** An error sent as a stream frame (`data: {"error": {...}}`), which some servers do mid-stream. */
export const openAIStreamErrorSchema = z.object({
  error: z.object({ message: z.string().optional(), type: z.string().nullish(), code: z.unknown() }),
});

export type OpenAIChatResponse = z.infer<typeof openAIChatResponseSchema>;
export type OpenAIChatChunk = z.infer<typeof openAIChatChunkSchema>;
