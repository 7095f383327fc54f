import type { CallOptions } from '@infergate/core';

/** Who said a message. */
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface ChatRequest {
  /** The provider's model name (e.g. "gpt-4o-mini", "claude-sonnet-4-5", a Triton model). */
  model: string;
  messages: readonly ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  stop?: readonly string[];
  /** Provider-specific fields passed through into the request body unchanged. */
  providerOptions?: Readonly<Record<string, unknown>>;
}

/**
 * Token usage in one shape for every provider. Unknown is `undefined`, never 0. `inputTokens`
 * includes cached tokens (as OpenTelemetry counts them); cache reads and writes are also given apart.
 */
export interface ChatUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  cacheReadTokens: number | undefined;
  cacheWriteTokens: number | undefined;
  reasoningTokens: number | undefined;
  /** The provider's own usage object, as received. */
  raw: unknown;
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls' | 'error' | 'other';

export interface ChatResponse {
  id: string;
  model: string;
  text: string;
  finishReason: FinishReason;
  /** The provider's own finish reason text. */
  rawFinishReason: string | undefined;
  usage: ChatUsage;
  /** Which adapter answered: "openai", "anthropic", "openai-compatible", "triton". */
  provider: string;
}

/** Events of a streamed chat: text as it arrives, then usage and finish (in either order). */
export type ChatStreamEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'usage'; usage: ChatUsage }
  | {
      type: 'finish';
      finishReason: FinishReason;
      rawFinishReason: string | undefined;
      id: string;
      model: string;
    };

export interface ChatCallOptions extends CallOptions {
  /** Retries are the router's job; adapters make one attempt. */
  maxRetries?: never;
}

/** One chat backend: a hosted provider, an OpenAI-compatible server or a Triton-hosted LLM. */
export interface ChatModel {
  /** "openai", "anthropic", "openai-compatible", "triton" (gen_ai.provider.name). */
  readonly provider: string;
  /** The model this adapter calls when a request does not name one. */
  readonly defaultModel?: string;
  /** Largest context window in tokens, when known (the router's context-length fallback uses it). */
  readonly contextWindow?: number;
  chat(request: ChatRequest, options?: ChatCallOptions): Promise<ChatResponse>;
  /** Leaving the loop early aborts the HTTP request (or cancels the gRPC stream). */
  chatStream(request: ChatRequest, options?: ChatCallOptions): AsyncIterable<ChatStreamEvent>;
}
