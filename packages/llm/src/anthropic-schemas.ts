import { z } from 'zod';

/**
 * The parts of Anthropic's Messages API the adapter reads (Message object, streaming events:
 * message_start, content_block_start/delta/stop, message_delta, message_stop, ping, error).
 * Unknown content-block and delta types pass (thinking, tool_use, …) and are ignored.
 */

const count = z.number().int().nonnegative().nullish();

export const anthropicUsageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
});

const contentBlock = z.looseObject({ type: z.string(), text: z.string().optional() });

export const anthropicMessageSchema = z.object({
  id: z.string(),
  type: z.literal('message').optional(),
  role: z.string().optional(),
  model: z.string(),
  content: z.array(contentBlock),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

export const anthropicStreamEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message_start'),
    message: z.object({
      id: z.string(),
      model: z.string(),
      usage: anthropicUsageSchema.nullish(),
    }),
  }),
  z.object({ type: z.literal('content_block_start'), index: z.number().int(), content_block: contentBlock }),
  z.object({
    type: z.literal('content_block_delta'),
    index: z.number().int(),
    delta: z.looseObject({ type: z.string(), text: z.string().optional() }),
  }),
  z.object({ type: z.literal('content_block_stop'), index: z.number().int() }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
    usage: anthropicUsageSchema.nullish(),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({
    type: z.literal('error'),
    error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }),
  }),
]);

export type AnthropicStreamEvent = z.infer<typeof anthropicStreamEventSchema>;
