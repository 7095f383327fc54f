import { type InfergateError, sdkTracer } from '@infergate/core';
import { loadOtel, otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes, Span } from '@opentelemetry/api';
import type { ChatMessage, ChatRequest, ChatUsage, FinishReason } from '../types.js';
import { VERSION } from '../version.js';

export interface ChatSpanOptions {
  enabled: boolean;
  captureContent: boolean;
  provider: string;
  request: ChatRequest;
  server: { address: string; port: number | undefined } | undefined;
}

export interface ChatSpanResult {
  id?: string | undefined;
  model?: string | undefined;
  finishReason?: string | undefined;
  usage?: ChatUsage | undefined;
  text?: string | undefined;
}

/** A GenAI client span for one chat call; `headers` receives the propagated trace context. */
export interface ChatSpan {
  injectInto(headers: Record<string, string>): void;
  end(result: ChatSpanResult | undefined, error?: InfergateError): void;
}

const noop: ChatSpan = { injectInto() {}, end() {} };

function inputMessages(messages: readonly ChatMessage[]): string {
  return JSON.stringify(
    messages.map((message) => ({ role: message.role, parts: [{ type: 'text', content: message.content }] })),
  );
}

/**
 * Starts a span named `chat {model}` with the OpenTelemetry GenAI semantic conventions. Prompt and
 * completion text are recorded only with `captureContent` (gen_ai.input.messages / output.messages).
 */
export function startChatSpan(options: ChatSpanOptions): ChatSpan {
  // Nothing registered with the API (no tracer, no propagator): it would only hand out no-ops, and
  // loading it would cost a first call its load (decision 0025, third addendum).
  if (!options.enabled || !otelRegistered()) return noop;
  const { context, propagation, SpanKind, SpanStatusCode, trace } = loadOtel();
  const tracer = sdkTracer('@infergate/llm', VERSION);
  // No SDK: no span; a propagator registered on its own still carries the caller's context.
  if (tracer === undefined)
    return { injectInto: (headers) => propagation.inject(context.active(), headers), end() {} };
  const { request } = options;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': options.provider,
    'gen_ai.request.model': request.model,
  };
  if (request.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = request.maxTokens;
  if (request.temperature !== undefined) attributes['gen_ai.request.temperature'] = request.temperature;
  if (request.stop !== undefined && request.stop.length > 0) {
    attributes['gen_ai.request.stop_sequences'] = [...request.stop];
  }
  if (options.server) {
    attributes['server.address'] = options.server.address;
    if (options.server.port !== undefined) attributes['server.port'] = options.server.port;
  }
  if (options.captureContent) attributes['gen_ai.input.messages'] = inputMessages(request.messages);
  const parent = context.active();
  const span: Span = tracer.startSpan(`chat ${request.model}`, { kind: SpanKind.CLIENT, attributes }, parent);
  let ended = false;
  return {
    injectInto(headers) {
      propagation.inject(trace.setSpan(parent, span), headers);
    },
    end(result, error) {
      if (ended) return;
      ended = true;
      if (result?.model !== undefined) span.setAttribute('gen_ai.response.model', result.model);
      if (result?.id !== undefined && result.id !== '') span.setAttribute('gen_ai.response.id', result.id);
      if (result?.finishReason !== undefined) {
        span.setAttribute('gen_ai.response.finish_reasons', [result.finishReason]);
      }
      const usage = result?.usage;
      if (usage?.inputTokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
      if (usage?.outputTokens !== undefined)
        span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
      if (usage?.cacheReadTokens !== undefined)
        span.setAttribute('gen_ai.usage.cache_read.input_tokens', usage.cacheReadTokens);
      if (usage?.cacheWriteTokens !== undefined)
        span.setAttribute('gen_ai.usage.cache_creation.input_tokens', usage.cacheWriteTokens);
      if (usage?.reasoningTokens !== undefined)
        span.setAttribute('gen_ai.usage.reasoning.output_tokens', usage.reasoningTokens);
      if (options.captureContent && result?.text !== undefined) {
        span.setAttribute(
          'gen_ai.output.messages',
          JSON.stringify([
            {
              role: 'assistant',
              parts: [{ type: 'text', content: result.text }],
              ...(result.finishReason === undefined ? {} : { finish_reason: result.finishReason }),
            },
          ]),
        );
      }
      if (error) {
        span.setAttribute('error.type', error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.rawMessage });
      }
      span.end();
    },
  };
}

/** `server.address` / `server.port` of a base URL (default ports filled in). */
export function serverOf(url: URL): { address: string; port: number } {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { address: url.hostname, port };
}

/** The finish reason text for spans: the provider's own text when there is one. */
export function spanFinishReason(raw: string | undefined, normalized: FinishReason): string {
  return raw ?? normalized;
}
