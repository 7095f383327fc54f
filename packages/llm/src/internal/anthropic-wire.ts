import { ErrorCode, InfergateError, parseServerSentEvents } from '@infergate/core';
import { anthropicMessageSchema, anthropicStreamEventSchema } from '../anthropic-schemas.js';
import type { ResolvedHttpOptions } from '../model-options.js';
import { codeForStreamError } from '../provider-errors.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, FinishReason } from '../types.js';
import { type AnthropicUsageWire, mergeAnthropicUsage, normalizeAnthropicUsage } from '../usage.js';
import { parseJson } from './http-request.js';
import { httpChatSite, postChat, streamEndedEarly, withCommonFields } from './post-chat.js';
import { redactSecrets } from './redact.js';
import { type ChatCall, type StreamProgress, type StreamSummary, wireChatModel } from './run-chat.js';
import { validateWire } from './validate.js';

/** Everything the Anthropic wire needs, resolved from the adapter's options. */
export interface AnthropicWireSettings extends ResolvedHttpOptions {
  url: URL;
  apiKey: string | undefined;
  anthropicVersion: string;
  headers: Readonly<Record<string, string>>;
  defaultMaxTokens: number;
}

const PROVIDER = 'anthropic';
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

/** A ChatModel speaking Anthropic's Messages API (JSON and SSE events). */
export function anthropicWireChatModel(config: AnthropicWireSettings): ChatModel {
  const { url, apiKey } = config;
  const { settings, endpoint } = httpChatSite({
    ...config,
    provider: PROVIDER,
    requestIdHeader: 'request-id',
  });
  const { secrets } = endpoint;

  function body(request: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
    const system = request.messages.filter((message) => message.role === 'system');
    const out: Record<string, unknown> = {
      model,
      max_tokens: request.maxTokens ?? config.defaultMaxTokens,
      messages: request.messages
        .filter((message) => message.role !== 'system')
        .map((message) => ({ role: message.role, content: message.content })),
    };
    if (system.length > 0) out.system = system.map((message) => message.content).join('\n\n');
    return withCommonFields(out, request, 'stop_sequences', stream);
  }

  function post(request: ChatRequest, options: ChatCallOptions, call: ChatCall, stream: boolean) {
    if (apiKey === undefined) {
      throw new InfergateError(
        ErrorCode.Unauthenticated,
        `${PROVIDER}: no API key (pass apiKey or set ANTHROPIC_API_KEY)`,
      );
    }
    const headers: Record<string, string> = {
      'x-api-key': apiKey,
      'anthropic-version': config.anthropicVersion,
      ...config.headers,
      ...options.headers,
    };
    return postChat(endpoint, call, headers, body(request, call.model, stream), stream);
  }

  async function send(request: ChatRequest, options: ChatCallOptions, call: ChatCall): Promise<ChatResponse> {
    const response = await post(request, options, call, false);
    const json = parseJson(await response.text(), 'a response body', PROVIDER);
    const message = validateWire(anthropicMessageSchema, json, 'a message', PROVIDER);
    const rawFinishReason = message.stop_reason ?? undefined;
    return {
      id: message.id,
      model: message.model,
      text: message.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text ?? '')
        .join(''),
      finishReason: anthropicFinishReason(rawFinishReason),
      rawFinishReason,
      usage: normalizeAnthropicUsage(message.usage as AnthropicUsageWire | null | undefined),
      provider: PROVIDER,
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
    let startUsage: AnthropicUsageWire | undefined;
    let deltaUsage: AnthropicUsageWire | undefined;
    let stopped = false;
    for await (const frame of parseServerSentEvents(response.body as ReadableStream<Uint8Array>)) {
      const json = parseJson(frame.data, `a '${frame.event}' event`, PROVIDER);
      const type = (json as { type?: unknown } | null)?.type;
      if (typeof type !== 'string' || !KNOWN_EVENTS.has(type)) continue;
      const event = validateWire(anthropicStreamEventSchema, json, `a '${type}' event`, PROVIDER);
      switch (event.type) {
        case 'message_start':
          progress.id = event.message.id;
          progress.model = event.message.model;
          startUsage = (event.message.usage ?? undefined) as AnthropicUsageWire | undefined;
          break;
        case 'content_block_delta':
          if (event.delta.type === 'text_delta' && event.delta.text) yield event.delta.text;
          break;
        case 'message_delta':
          if (event.delta.stop_reason) rawFinishReason = event.delta.stop_reason;
          if (event.usage) deltaUsage = event.usage as AnthropicUsageWire;
          break;
        case 'error': {
          const parsed = { message: event.error.message, type: event.error.type, code: undefined };
          throw new InfergateError(
            codeForStreamError(parsed),
            `${PROVIDER} stream error: ${redactSecrets(parsed.message ?? parsed.type ?? 'error event', secrets)}`,
            { model: call.model, endpoint: url.origin, details: { provider: PROVIDER, type: parsed.type } },
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
    if (!stopped) throw streamEndedEarly(endpoint, call, 'message_stop');
    return {
      id: progress.id,
      model: progress.model,
      finishReason: anthropicFinishReason(rawFinishReason),
      rawFinishReason,
      usage: normalizeAnthropicUsage(mergeAnthropicUsage(startUsage, deltaUsage)),
    };
  }

  return wireChatModel(settings, config.contextWindow, { send, deltas });
}
