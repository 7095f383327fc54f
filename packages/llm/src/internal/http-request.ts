import { ErrorCode, InfergateError } from '@infergate/core';
import { type HttpErrorContext, httpError } from '../provider-errors.js';
import { redactSecrets } from './redact.js';

export type FetchFunction = typeof globalThis.fetch;

export interface PostOptions {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  fetch: FetchFunction;
  /** "application/json" or "text/event-stream": a 2xx answer of another type is DATA_LOSS. */
  expect: 'json' | 'sse';
  errorContext: HttpErrorContext;
}

/** Reads at most `limit` characters of an error body (a proxy's HTML page can be large). */
async function readText(response: Response, limit = 64 * 1024): Promise<string> {
  const text = await response.text();
  return text.length > limit ? text.slice(0, limit) : text;
}

/** POSTs a JSON body; a non-2xx answer becomes the mapped InfergateError (provider-errors.ts). */
export async function postJson(options: PostOptions): Promise<Response> {
  const response = await options.fetch(options.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(options.body),
    signal: options.signal,
  });
  if (!response.ok) {
    throw httpError(response.status, response.headers, await readText(response), options.errorContext);
  }
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const wanted = options.expect === 'sse' ? 'text/event-stream' : 'application/json';
  const tolerated = options.expect === 'json' && type.includes('+json');
  if (!type.includes(wanted) && !tolerated) {
    const preview = redactSecrets(
      (await readText(response, 200)).replace(/\s+/g, ' '),
      options.errorContext.secrets,
    );
    throw new InfergateError(
      ErrorCode.DataLoss,
      `${options.errorContext.provider} answered HTTP ${response.status} with content-type '${type || 'none'}' instead of ${wanted}: ${preview}`,
      {
        httpStatus: response.status,
        details: { provider: options.errorContext.provider, contentType: type },
        ...(options.errorContext.model === undefined ? {} : { model: options.errorContext.model }),
        ...(options.errorContext.endpoint === undefined ? {} : { endpoint: options.errorContext.endpoint }),
      },
    );
  }
  if (options.expect === 'sse' && response.body === null) {
    throw new InfergateError(ErrorCode.DataLoss, `${options.errorContext.provider} sent an empty stream`, {
      httpStatus: response.status,
    });
  }
  return response;
}

/** Parses JSON text; a syntax error becomes DATA_LOSS naming what was being read. */
export function parseJson(text: string, what: string, provider: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const preview = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    throw new InfergateError(ErrorCode.DataLoss, `${provider} sent ${what} that is not JSON: ${preview}`, {
      cause: error,
      details: { provider },
    });
  }
}
