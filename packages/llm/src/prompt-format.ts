import type { ChatMessage } from './types.js';

/**
 * The default prompt for Triton-hosted models, which take raw text: one `role: content` line per
 * message, then `assistant:` for the model to continue. Real chat models want their tokenizer's
 * chat template; pass `formatPrompt` to `createTritonChatModel` for that.
 */
export function formatChatPrompt(messages: readonly ChatMessage[]): string {
  return `${messages.map((message) => `${message.role}: ${message.content}`).join('\n')}\nassistant:`;
}
