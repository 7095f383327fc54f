import { ErrorCode, InfergateError } from '@infergate/core';
import { openAIWireChatModel } from './internal/openai-wire.js';
import { baseUrl, checkHttpOptions, type HttpChatModelOptions, resolveHttpOptions } from './model-options.js';
import type { ChatModel } from './types.js';

export interface OpenAICompatibleChatModelOptions extends HttpChatModelOptions {
  /** The server's OpenAI base URL, e.g. `http://vllm:8000/v1` or Triton's OpenAI frontend. Required. */
  baseURL: string;
  /** Sent as a Bearer token when given. Environment variables are never read for this adapter. */
  apiKey?: string;
  /** gen_ai.provider.name and `ChatModel.provider`. @default 'openai-compatible' */
  provider?: string;
  /** The field that carries `maxTokens`. @default 'max_tokens' (what vLLM and Triton's frontend read) */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Send `stream_options: { include_usage: true }`; turn off for servers that reject it. @default true */
  includeUsage?: boolean;
}

/**
 * Any server speaking OpenAI's Chat Completions (vLLM, Triton's OpenAI frontend, TGI, …). Same wire
 * as `createOpenAIChatModel`, tolerant of missing usage, ids and models (unknown usage stays undefined).
 */
export function createOpenAICompatibleChatModel(options: OpenAICompatibleChatModelOptions): ChatModel {
  if (options === undefined || typeof options.baseURL !== 'string') {
    throw new InfergateError(ErrorCode.InvalidArgument, 'createOpenAICompatibleChatModel needs a baseURL');
  }
  checkHttpOptions(options, 'OpenAI-compatible');
  return openAIWireChatModel({
    provider: options.provider ?? 'openai-compatible',
    baseURL: baseUrl(options.baseURL),
    apiKey: options.apiKey,
    missingKeyHint: undefined,
    headers: { ...options.headers },
    maxTokensField: options.maxTokensField ?? 'max_tokens',
    includeUsage: options.includeUsage ?? true,
    ...resolveHttpOptions(options),
  });
}
