import type { HttpErrorContext } from '../provider-errors.js';
import { type FetchFunction, postJson } from './http-request.js';
import type { ChatCall } from './run-chat.js';

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
