import { ErrorCode, InfergateError, parseServerSentEvents } from '@infergate/core';
import type { ResolvedHttpOptions } from '../model-options.js';
import {
  openAIChatChunkSchema,
  openAIChatResponseSchema,
  openAIStreamErrorSchema,
} from '../openai-schemas.js';
import { codeForStreamError, parseErrorBody } from '../provider-errors.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, FinishReason } from '../types.js';
import { normalizeOpenAIUsage, type OpenAIUsageWire } from '../usage.js';
import { parseJson } from './http-request.js';
import { httpChatSite, postChat, streamEndedEarly, withCommonFields } from './post-chat.js';
import { redactSecrets } from './redact.js';
import { type ChatCall, type StreamProgress, type StreamSummary, wireChatModel } from './run-chat.js';
import { validateWire } from './validate.js';

/** Everything that differs between OpenAI proper and an OpenAI-compatible server. */
export interface OpenAIWireSettings extends ResolvedHttpOptions {
  provider: string;
  baseURL: string;
  /** Held only in this closure; never logged, never put in errors or spans. */
  apiKey: string | undefined;
  /** Said in the UNAUTHENTICATED error when a key is required and missing. */
  missingKeyHint: string | undefined;
  headers: Readonly<Record<string, string>>;
  /** OpenAI deprecated `max_tokens` for `max_completion_tokens`; vLLM and older servers want the former. */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Ask for the final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
}

export function openAIFinishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}

function hasErrorField(json: unknown): boolean {
  return typeof json === 'object' && json !== null && 'error' in json;
}

/** A ChatModel speaking OpenAI's Chat Completions (JSON and SSE). */
export function openAIWireChatModel(config: OpenAIWireSettings): ChatModel {
  const url = new URL(`${config.baseURL}/chat/completions`);
  const { settings, endpoint } = httpChatSite({
    ...config,
    url,
    defaultMaxTokens: undefined,
    requestIdHeader: 'x-request-id',
  });
  const { secrets } = endpoint;

  function body(request: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {
      model,
      messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
    };
    if (request.maxTokens !== undefined) out[config.maxTokensField] = request.maxTokens;
    withCommonFields(out, request, 'stop', stream);
    if (stream && config.includeUsage) out.stream_options = { include_usage: true };
    return out;
  }

  function post(request: ChatRequest, options: ChatCallOptions, call: ChatCall, stream: boolean) {
    if (config.apiKey === undefined && config.missingKeyHint !== undefined) {
      throw new InfergateError(
        ErrorCode.Unauthenticated,
        `${config.provider}: no API key (${config.missingKeyHint})`,
      );
    }
    const headers: Record<string, string> = {
      ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
      ...config.headers,
      ...options.headers,
    };
    return postChat(endpoint, call, headers, body(request, call.model, stream), stream);
  }

  async function send(request: ChatRequest, options: ChatCallOptions, call: ChatCall): Promise<ChatResponse> {
    const response = await post(request, options, call, false);
    const json = parseJson(await response.text(), 'a response body', config.provider);
    const wire = validateWire(openAIChatResponseSchema, json, 'a chat completion', config.provider);
    const choice = wire.choices[0];
    if (choice === undefined) {
      throw new InfergateError(
        ErrorCode.DataLoss,
        `${config.provider} sent a chat completion without choices`,
      );
    }
    const rawFinishReason = choice.finish_reason ?? undefined;
    return {
      id: wire.id ?? response.headers.get('x-request-id') ?? '',
      model: wire.model ?? call.model,
      text: choice.message.content ?? '',
      finishReason: openAIFinishReason(rawFinishReason),
      rawFinishReason,
      usage: normalizeOpenAIUsage(wire.usage as OpenAIUsageWire | null | undefined),
      provider: config.provider,
    };
  }

  async function* deltas(
    request: ChatRequest,
    options: ChatCallOptions,
    call: ChatCall,
    progress: StreamProgress,
  ): AsyncGenerator<string, StreamSummary, undefined> {
    const response = await post(request, options, call, true);
    let rawFinishReason: string | undefined;
    let usageWire: OpenAIUsageWire | undefined;
    let done = false;
    for await (const frame of parseServerSentEvents(response.body as ReadableStream<Uint8Array>)) {
      if (frame.data.trim() === '[DONE]') {
        done = true;
        break;
      }
      const json = parseJson(frame.data, 'a stream frame', config.provider);
      // Only a frame with an `error` field pays for the error schema; chunks skip it.
      if (hasErrorField(json) && openAIStreamErrorSchema.safeParse(json).success) {
        const parsed = parseErrorBody(frame.data);
        const message = redactSecrets(parsed.message ?? 'error event', secrets);
        throw new InfergateError(codeForStreamError(parsed), `${config.provider} stream error: ${message}`, {
          model: call.model,
          details: { provider: config.provider, type: parsed.type },
        });
      }
      const chunk = validateWire(openAIChatChunkSchema, json, 'a stream chunk', config.provider);
      if (progress.id === '' && chunk.id) progress.id = chunk.id;
      if (chunk.model) progress.model = chunk.model;
      if (chunk.usage) usageWire = chunk.usage as OpenAIUsageWire;
      const choice = chunk.choices.find((candidate) => (candidate.index ?? 0) === 0);
      if (choice?.finish_reason) rawFinishReason = choice.finish_reason;
      const delta = choice?.delta?.content;
      if (delta !== undefined && delta !== null && delta !== '') yield delta;
    }
    if (!done && rawFinishReason === undefined) throw streamEndedEarly(endpoint, call, '[DONE]');
    return {
      id: progress.id,
      model: progress.model,
      finishReason: openAIFinishReason(rawFinishReason),
      rawFinishReason,
      usage: normalizeOpenAIUsage(usageWire),
    };
  }

  return wireChatModel(settings, config.contextWindow, { send, deltas });
}
