import { apiKeyFromEnv } from './internal/env.js';
import { openAIWireChatModel } from './internal/openai-wire.js';
import { baseUrl, checkHttpOptions, type HttpChatModelOptions, resolveHttpOptions } from './model-options.js';
import type { ChatModel } from './types.js';

export interface OpenAIChatModelOptions extends HttpChatModelOptions {
  /** @default process.env.OPENAI_API_KEY */
  apiKey?: string;
  /** @default 'https://api.openai.com/v1' */
  baseURL?: string;
  /** Sent as `OpenAI-Organization`. */
  organization?: string;
  /** Sent as `OpenAI-Project`. */
  project?: string;
}

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * OpenAI's Chat Completions API over fetch: JSON for `chat`, SSE with
 * `stream_options.include_usage` for `chatStream`. A missing key fails each call with UNAUTHENTICATED.
 */
export function createOpenAIChatModel(options: OpenAIChatModelOptions = {}): ChatModel {
  checkHttpOptions(options, 'OpenAI');
  const apiKey = options.apiKey ?? apiKeyFromEnv('OPENAI_API_KEY');
  const headers: Record<string, string> = { ...options.headers };
  if (options.organization !== undefined) headers['openai-organization'] = options.organization;
  if (options.project !== undefined) headers['openai-project'] = options.project;
  return openAIWireChatModel({
    provider: 'openai',
    baseURL: baseUrl(options.baseURL ?? OPENAI_BASE_URL),
    apiKey,
    missingKeyHint: 'pass apiKey or set OPENAI_API_KEY',
    headers,
    maxTokensField: 'max_completion_tokens',
    includeUsage: true,
    ...resolveHttpOptions(options),
  });
}
