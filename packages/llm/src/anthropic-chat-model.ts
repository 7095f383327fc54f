import { anthropicWireChatModel } from './internal/anthropic-wire.js';
import { apiKeyFromEnv } from './internal/env.js';
import { baseUrl, checkHttpOptions, type HttpChatModelOptions, resolveHttpOptions } from './model-options.js';
import type { ChatModel } from './types.js';

export { anthropicFinishReason } from './internal/anthropic-wire.js';

export interface AnthropicChatModelOptions extends HttpChatModelOptions {
  /** @default process.env.ANTHROPIC_API_KEY */
  apiKey?: string;
  /** @default 'https://api.anthropic.com' (the adapter appends /v1/messages) */
  baseURL?: string;
  /** The `anthropic-version` header. @default '2023-06-01' */
  anthropicVersion?: string;
  /** `max_tokens` is required by the Messages API; used when a request gives none. @default 4096 */
  defaultMaxTokens?: number;
}

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Anthropic's Messages API over fetch: JSON for `chat`, SSE events for `chatStream`. */
export function createAnthropicChatModel(options: AnthropicChatModelOptions = {}): ChatModel {
  checkHttpOptions(options, 'Anthropic');
  return anthropicWireChatModel({
    url: new URL(`${baseUrl(options.baseURL ?? ANTHROPIC_BASE_URL)}/v1/messages`),
    apiKey: options.apiKey ?? apiKeyFromEnv('ANTHROPIC_API_KEY'),
    anthropicVersion: options.anthropicVersion ?? '2023-06-01',
    headers: options.headers ?? {},
    defaultMaxTokens: options.defaultMaxTokens ?? 4096,
    ...resolveHttpOptions(options),
  });
}
