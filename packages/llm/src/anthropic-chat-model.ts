import { ErrorCode, InfergateError } from '@infergate/core';
import { anthropicMessageSchema, anthropicStreamEventSchema } from './anthropic-schemas.js';
import { codeForStreamError, type HttpErrorContext } from './http-errors.js';
import { CallScope } from './internal/call-scope.js';
import { serverOf, startChatSpan } from './internal/chat-span.js';
import { apiKeyFromEnv } from './internal/env.js';
import { parseJson, postJson } from './internal/http-request.js';
import { redactSecrets } from './internal/redact.js';
import { resolveModel } from './internal/resolve-model.js';
import { parseSse } from './internal/sse.js';
import { validateWire } from './internal/validate.js';
import { baseUrl, checkHttpOptions, type HttpChatModelOptions } from './model-options.js';
import type {
  ChatCallOptions,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  FinishReason,
} from './types.js';
import { type AnthropicUsageWire, mergeAnthropicUsage, normalizeAnthropicUsage } from './usage.js';

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
const KNOWN_EVENTS = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
]);

export function anthropicFinishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}

/** Anthropic's Messages API over fetch: JSON for `chat`, SSE events for `chatStream`. */
export function createAnthropicChatModel(options: AnthropicChatModelOptions = {}): ChatModel {
  checkHttpOptions(options, 'Anthropic');
  const apiKey = options.apiKey ?? apiKeyFromEnv('ANTHROPIC_API_KEY');
  const secrets = apiKey === undefined ? [] : [apiKey];
  const url = new URL(`${baseUrl(options.baseURL ?? ANTHROPIC_BASE_URL)}/v1/messages`);
  const server = serverOf(url);
  const provider = 'anthropic';
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const defaultMaxTokens = options.defaultMaxTokens ?? 4096;
  const fixedHeaders: Record<string, string> = {
    'anthropic-version': options.anthropicVersion ?? '2023-06-01',
    ...options.headers,
  };

  function body(request: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
    const system = request.messages.filter((message) => message.role === 'system');
    const out: Record<string, unknown> = {
      model,
      max_tokens: request.maxTokens ?? defaultMaxTokens,
      messages: request.messages
        .filter((message) => message.role !== 'system')
        .map((message) => ({ role: message.role, content: message.content })),
    };
    if (system.length > 0) out.system = system.map((message) => message.content).join('\n\n');
    if (request.temperature !== undefined) out.temperature = request.temperature;
    if (request.stop !== undefined && request.stop.length > 0) out.stop_sequences = [...request.stop];
    Object.assign(out, request.providerOptions);
    if (stream) out.stream = true;
    return out;
  }

  function headers(callOptions: ChatCallOptions): Record<string, string> {
    if (apiKey === undefined) {
      throw new InfergateError(
        ErrorCode.Unauthenticated,
        `${provider}: no API key (pass apiKey or set ANTHROPIC_API_KEY)`,
      );
    }
    return { 'x-api-key': apiKey, ...fixedHeaders, ...callOptions.headers };
  }

  function begin(request: ChatRequest, callOptions: ChatCallOptions) {
    const model = resolveModel(request, options.defaultModel, provider);
    const errorContext: HttpErrorContext = {
      provider,
      model,
      endpoint: url.origin,
      secrets,
      requestIdHeader: 'request-id',
    };
    const scope = new CallScope(callOptions, options.timeoutMs, { ...errorContext, model });
    const span = startChatSpan({
      enabled: options.tracing ?? true,
      captureContent: options.captureContent ?? false,
      provider,
      request: { ...request, model, maxTokens: request.maxTokens ?? defaultMaxTokens },
      server,
    });
    return { model, errorContext, scope, span };
  }

  async function chat(request: ChatRequest, callOptions: ChatCallOptions = {}): Promise<ChatResponse> {
    const { model, errorContext, scope, span } = begin(request, callOptions);
    try {
      const requestHeaders = headers(callOptions);
      span.injectInto(requestHeaders);
      const response = await postJson({
        url,
        headers: requestHeaders,
        body: body(request, model, false),
        signal: scope.signal,
        fetch: fetchImpl,
        expect: 'json',
        errorContext,
      });
      const json = parseJson(await response.text(), 'a response body', provider);
      const message = validateWire(anthropicMessageSchema, json, 'a message', provider);
      const rawFinishReason = message.stop_reason ?? undefined;
      const result: ChatResponse = {
        id: message.id,
        model: message.model,
        text: message.content
          .filter((block) => block.type === 'text')
          .map((block) => block.text ?? '')
          .join(''),
        finishReason: anthropicFinishReason(rawFinishReason),
        rawFinishReason,
        usage: normalizeAnthropicUsage(message.usage as AnthropicUsageWire | null | undefined),
        provider,
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
    callOptions: ChatCallOptions = {},
  ): AsyncGenerator<ChatStreamEvent, void, undefined> {
    const { model, errorContext, scope, span } = begin(request, callOptions);
    let id = '';
    let responseModel = model;
    let rawFinishReason: string | undefined;
    let startUsage: AnthropicUsageWire | undefined;
    let deltaUsage: AnthropicUsageWire | undefined;
    let text = '';
    let failure: InfergateError | undefined;
    let completed = false;
    try {
      const requestHeaders = headers(callOptions);
      span.injectInto(requestHeaders);
      const response = await postJson({
        url,
        headers: requestHeaders,
        body: body(request, model, true),
        signal: scope.signal,
        fetch: fetchImpl,
        expect: 'sse',
        errorContext,
      });
      let stopped = false;
      for await (const frame of parseSse(response.body as ReadableStream<Uint8Array>)) {
        const json = parseJson(frame.data, `a '${frame.event}' event`, provider);
        const type = (json as { type?: unknown } | null)?.type;
        if (typeof type !== 'string' || !KNOWN_EVENTS.has(type)) continue;
        const event = validateWire(anthropicStreamEventSchema, json, `a '${type}' event`, provider);
        switch (event.type) {
          case 'message_start':
            id = event.message.id;
            responseModel = event.message.model;
            startUsage = (event.message.usage ?? undefined) as AnthropicUsageWire | undefined;
            break;
          case 'content_block_delta':
            if (event.delta.type === 'text_delta' && event.delta.text) {
              if (options.captureContent) text += event.delta.text;
              yield { type: 'text-delta', text: event.delta.text };
            }
            break;
          case 'message_delta':
            if (event.delta.stop_reason) rawFinishReason = event.delta.stop_reason;
            if (event.usage) deltaUsage = event.usage as AnthropicUsageWire;
            break;
          case 'error': {
            const parsed = { message: event.error.message, type: event.error.type, code: undefined };
            throw new InfergateError(
              codeForStreamError(parsed),
              `${provider} stream error: ${redactSecrets(parsed.message ?? parsed.type ?? 'error event', secrets)}`,
              { model, endpoint: url.origin, details: { provider, type: parsed.type } },
            );
          }
          case 'message_stop':
            stopped = true;
            break;
          default:
            break;
        }
        if (stopped) break;
      }
      if (!stopped) {
        throw new InfergateError(ErrorCode.Unavailable, `${provider}: the stream ended before message_stop`, {
          model,
          endpoint: url.origin,
        });
      }
      const usage = normalizeAnthropicUsage(mergeAnthropicUsage(startUsage, deltaUsage));
      const finishReason = anthropicFinishReason(rawFinishReason);
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
    provider,
    ...(options.defaultModel === undefined ? {} : { defaultModel: options.defaultModel }),
    ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
    chat,
    chatStream,
  };
}
