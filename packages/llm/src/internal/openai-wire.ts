import { ErrorCode, InfergateError } from '@infergate/core';
import { codeForStreamError, type HttpErrorContext, parseErrorBody } from '../http-errors.js';
import {
  openAIChatChunkSchema,
  openAIChatResponseSchema,
  openAIStreamErrorSchema,
} from '../openai-schemas.js';
import type {
  ChatCallOptions,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  FinishReason,
} from '../types.js';
import { normalizeOpenAIUsage, type OpenAIUsageWire } from '../usage.js';
import { CallScope } from './call-scope.js';
import { serverOf, startChatSpan } from './chat-span.js';
import { type FetchFunction, parseJson, postJson } from './http-request.js';
import { redactSecrets } from './redact.js';
import { resolveModel } from './resolve-model.js';
import { parseSse } from './sse.js';
import { validateWire } from './validate.js';

/** Everything that differs between OpenAI proper and an OpenAI-compatible server. */
export interface OpenAIWireConfig {
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
  defaultModel: string | undefined;
  contextWindow: number | undefined;
  timeoutMs: number | undefined;
  fetch: FetchFunction;
  tracing: boolean;
  captureContent: boolean;
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

/** A ChatModel speaking OpenAI's Chat Completions (JSON and SSE). */
export function openAIWireChatModel(config: OpenAIWireConfig): ChatModel {
  const url = new URL(`${config.baseURL}/chat/completions`);
  const server = serverOf(url);
  const secrets = config.apiKey === undefined ? [] : [config.apiKey];

  function body(request: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {
      model,
      messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
    };
    if (request.maxTokens !== undefined) out[config.maxTokensField] = request.maxTokens;
    if (request.temperature !== undefined) out.temperature = request.temperature;
    if (request.stop !== undefined && request.stop.length > 0) out.stop = [...request.stop];
    Object.assign(out, request.providerOptions);
    if (stream) {
      out.stream = true;
      if (config.includeUsage) out.stream_options = { include_usage: true };
    }
    return out;
  }

  function headers(options: ChatCallOptions): Record<string, string> {
    if (config.apiKey === undefined && config.missingKeyHint !== undefined) {
      throw new InfergateError(
        ErrorCode.Unauthenticated,
        `${config.provider}: no API key (${config.missingKeyHint})`,
      );
    }
    return {
      ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
      ...config.headers,
      ...options.headers,
    };
  }

  function begin(request: ChatRequest, options: ChatCallOptions) {
    const model = resolveModel(request, config.defaultModel, config.provider);
    const errorContext: HttpErrorContext = {
      provider: config.provider,
      model,
      endpoint: url.origin,
      secrets,
      requestIdHeader: 'x-request-id',
    };
    const scope = new CallScope(options, config.timeoutMs, { ...errorContext, model });
    const span = startChatSpan({
      enabled: config.tracing,
      captureContent: config.captureContent,
      provider: config.provider,
      request: { ...request, model },
      server,
    });
    return { model, errorContext, scope, span };
  }

  async function chat(request: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
    const { model, errorContext, scope, span } = begin(request, options);
    try {
      const requestHeaders = headers(options);
      span.injectInto(requestHeaders);
      const response = await postJson({
        url,
        headers: requestHeaders,
        body: body(request, model, false),
        signal: scope.signal,
        fetch: config.fetch,
        expect: 'json',
        errorContext,
      });
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
      const result: ChatResponse = {
        id: wire.id ?? response.headers.get('x-request-id') ?? '',
        model: wire.model ?? model,
        text: choice.message.content ?? '',
        finishReason: openAIFinishReason(rawFinishReason),
        rawFinishReason,
        usage: normalizeOpenAIUsage(wire.usage as OpenAIUsageWire | null | undefined),
        provider: config.provider,
      };
      span.end({ ...result, finishReason: rawFinishReason });
      return result;
    } catch (error) {
      const mapped = scope.toError(error);
      span.end(undefined, mapped);
      throw mapped;
    } finally {
      scope.dispose();
    }
  }

  async function* chatStream(
    request: ChatRequest,
    options: ChatCallOptions = {},
  ): AsyncGenerator<ChatStreamEvent, void, undefined> {
    const { model, errorContext, scope, span } = begin(request, options);
    let id = '';
    let responseModel = model;
    let rawFinishReason: string | undefined;
    let usageWire: OpenAIUsageWire | undefined;
    let text = '';
    let failure: InfergateError | undefined;
    let completed = false;
    try {
      const requestHeaders = headers(options);
      span.injectInto(requestHeaders);
      const response = await postJson({
        url,
        headers: requestHeaders,
        body: body(request, model, true),
        signal: scope.signal,
        fetch: config.fetch,
        expect: 'sse',
        errorContext,
      });
      let done = false;
      for await (const frame of parseSse(response.body as ReadableStream<Uint8Array>)) {
        if (frame.data.trim() === '[DONE]') {
          done = true;
          break;
        }
        const json = parseJson(frame.data, 'a stream frame', config.provider);
        const streamError = openAIStreamErrorSchema.safeParse(json);
        if (streamError.success) {
          const parsed = parseErrorBody(frame.data);
          const message = redactSecrets(parsed.message ?? 'error event', secrets);
          throw new InfergateError(
            codeForStreamError(parsed),
            `${config.provider} stream error: ${message}`,
            {
              model,
              details: { provider: config.provider, type: parsed.type },
            },
          );
        }
        const chunk = validateWire(openAIChatChunkSchema, json, 'a stream chunk', config.provider);
        if (id === '' && chunk.id) id = chunk.id;
        if (chunk.model) responseModel = chunk.model;
        if (chunk.usage) usageWire = chunk.usage as OpenAIUsageWire;
        const choice = chunk.choices.find((candidate) => (candidate.index ?? 0) === 0);
        if (choice?.finish_reason) rawFinishReason = choice.finish_reason;
        const delta = choice?.delta?.content;
        if (delta !== undefined && delta !== null && delta !== '') {
          if (config.captureContent) text += delta;
          yield { type: 'text-delta', text: delta };
        }
      }
      if (!done && rawFinishReason === undefined) {
        throw new InfergateError(
          ErrorCode.Unavailable,
          `${config.provider}: the stream ended before [DONE]`,
          {
            model,
            endpoint: url.origin,
          },
        );
      }
      const usage = normalizeOpenAIUsage(usageWire);
      const finishReason = openAIFinishReason(rawFinishReason);
      completed = true;
      span.end({ id, model: responseModel, finishReason: rawFinishReason, usage, text });
      yield { type: 'usage', usage };
      yield { type: 'finish', finishReason, rawFinishReason, id, model: responseModel };
    } catch (error) {
      failure = scope.toError(error);
      throw failure;
    } finally {
      if (!completed) {
        scope.abort();
        span.end({ id, model: responseModel, text }, failure);
      }
      scope.dispose();
    }
  }

  return {
    provider: config.provider,
    ...(config.defaultModel === undefined ? {} : { defaultModel: config.defaultModel }),
    ...(config.contextWindow === undefined ? {} : { contextWindow: config.contextWindow }),
    chat,
    chatStream,
  };
}
