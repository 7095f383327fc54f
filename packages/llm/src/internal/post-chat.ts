import { ErrorCode, InfergateError } from '@infergate/core';
import type { HttpErrorContext } from '../provider-errors.js';
import type { ChatRequest } from '../types.js';
import { serverOf } from './chat-span.js';
import { type FetchFunction, postJson } from './http-request.js';
import type { ChatCall, ChatCallSettings } from './run-chat.js';

/** Where an HTTP adapter sends its calls, and what its errors say. */
export interface ChatEndpoint {
  url: URL;
  fetch: FetchFunction;
  provider: string;
  /** Redacted from error messages. */
  secrets: readonly string[];
  /** The response header that carries the provider's request id. */
  requestIdHeader: string;
}

/**
 * POSTs one chat call's body with the call's signal and trace context; a non-2xx answer becomes
 * the provider's typed error. `stream` asks for SSE.
 */
export function postChat(
  endpoint: ChatEndpoint,
  call: ChatCall,
  headers: Record<string, string>,
  body: Record<string, unknown>,
  stream: boolean,
): Promise<Response> {
  call.span.injectInto(headers);
  const errorContext: HttpErrorContext = {
    provider: endpoint.provider,
    model: call.model,
    endpoint: endpoint.url.origin,
    secrets: endpoint.secrets,
    requestIdHeader: endpoint.requestIdHeader,
  };
  return postJson({
    url: endpoint.url,
    headers,
    body,
    signal: call.signal,
    fetch: endpoint.fetch,
    expect: stream ? 'sse' : 'json',
    errorContext,
  });
}

/** What an HTTP wire module (OpenAI, Anthropic) is configured with, whatever its provider. */
export interface HttpChatSite {
  provider: string;
  url: URL;
  /** Redacted from error messages. */
  apiKey: string | undefined;
  requestIdHeader: string;
  defaultModel: string | undefined;
  defaultMaxTokens: number | undefined;
  timeoutMs: number | undefined;
  fetch: FetchFunction;
  tracing: boolean;
  captureContent: boolean;
}

/** An HTTP wire's call settings (for the shared lifecycle) and endpoint (for `postChat`). */
export function httpChatSite(site: HttpChatSite): { settings: ChatCallSettings; endpoint: ChatEndpoint } {
  const { url, provider } = site;
  const secrets = site.apiKey === undefined ? [] : [site.apiKey];
  return {
    settings: {
      provider,
      defaultModel: site.defaultModel,
      defaultMaxTokens: site.defaultMaxTokens,
      endpoint: url.origin,
      server: serverOf(url),
      secrets,
      timeoutMs: site.timeoutMs,
      tracing: site.tracing,
      captureContent: site.captureContent,
    },
    endpoint: { url, fetch: site.fetch, provider, secrets, requestIdHeader: site.requestIdHeader },
  };
}

/**
 * Adds the body fields both HTTP wires send alike to `body`: `temperature`, the stop sequences
 * under the wire's `stopField`, the request's `providerOptions` as they are, then `stream`.
 */
export function withCommonFields(
  body: Record<string, unknown>,
  request: ChatRequest,
  stopField: 'stop' | 'stop_sequences',
  stream: boolean,
): Record<string, unknown> {
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.stop !== undefined && request.stop.length > 0) body[stopField] = [...request.stop];
  Object.assign(body, request.providerOptions);
  if (stream) body.stream = true;
  return body;
}

/** UNAVAILABLE for an SSE stream that ended before the provider's end marker. */
export function streamEndedEarly(endpoint: ChatEndpoint, call: ChatCall, marker: string): InfergateError {
  return new InfergateError(
    ErrorCode.Unavailable,
    `${endpoint.provider}: the stream ended before ${marker}`,
    {
      model: call.model,
      endpoint: endpoint.url.origin,
    },
  );
}
