/** Characters per token of the heuristic, and the padding factor on top (over- rather than under-reserve). */
const HEURISTIC_CHARS_PER_TOKEN = 3.5;
const HEURISTIC_PADDING = 1.2;
const HEURISTIC_TOKENS_PER_MESSAGE = 4;

/**
 * Padded token estimate of chat messages for models without a local tokenizer:
 * ceil(chars / 3.5 × 1.2) + 4 per message. The cost package reserves budget with it and the chat
 * router ranks and caps targets by price with it, so both see the same number for one request.
 */
export function heuristicTokens(messages: readonly { role: string; content: string }[]): number {
  let chars = 0;
  for (const message of messages) chars += message.content.length + message.role.length;
  return (
    Math.ceil((chars / HEURISTIC_CHARS_PER_TOKEN) * HEURISTIC_PADDING) +
    HEURISTIC_TOKENS_PER_MESSAGE * messages.length
  );
}
