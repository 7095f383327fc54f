import { assertSafeHeaders, ErrorCode, InfergateError } from '@infergate/core';
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
  /**
   * Largest 2xx body read, in bytes: a JSON answer or a whole event stream over it fails with
   * DATA_LOSS instead of filling memory. @default 32 MiB for JSON, 128 MiB for an event stream
   */
  maxResponseBytes?: number;
}

/** Largest JSON answer read by default. */
export const MAX_JSON_RESPONSE_BYTES = 32 * 1024 * 1024;
/** Largest event stream read by default (a long generation sends a JSON frame per token). */
export const MAX_SSE_RESPONSE_BYTES = 128 * 1024 * 1024;

/** Reads at most `limit` bytes of an error body (a proxy's HTML page can be large), then stops. */
async function readText(response: Response, limit = 64 * 1024): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function tooLarge(limit: number, context: HttpErrorContext): InfergateError {
  return new InfergateError(
    ErrorCode.DataLoss,
    `${context.provider}'s answer is larger than ${limit} bytes (maxResponseBytes): not read further`,
    {
      retryable: false,
      details: { provider: context.provider, option: 'maxResponseBytes', limit },
      ...(context.model === undefined ? {} : { model: context.model }),
    },
  );
}

/** The response with a body that fails once more than `limit` bytes have arrived. */
function bounded(response: Response, limit: number, context: HttpErrorContext): Response {
  if (response.body === null) return response;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    void response.body.cancel().catch(() => {});
    throw tooLarge(limit, context);
  }
  let total = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > limit) controller.error(tooLarge(limit, context));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** POSTs a JSON body; a non-2xx answer becomes the mapped InfergateError (provider-errors.ts). */
export async function postJson(options: PostOptions): Promise<Response> {
  // A CR/LF in a configured header would split it; the error names the header, not the key in it.
  assertSafeHeaders(options.headers, `${options.errorContext.provider} request headers`);
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
  const limit =
    options.maxResponseBytes ?? (options.expect === 'sse' ? MAX_SSE_RESPONSE_BYTES : MAX_JSON_RESPONSE_BYTES);
  return bounded(response, limit, options.errorContext);
}

/**
 * `JSON.parse` makes `__proto__` an own property, harmless by itself, but one merge or
 * `Object.assign` later it replaces a prototype. Drop that key (also when written with `\u`
 * escapes); the scan keeps the common case at plain `JSON.parse` speed.
 */
function withoutPollutingKeys(key: string, value: unknown): unknown {
  // A reviver that returns undefined removes the property.
  return key === '__proto__' ? undefined : value;
}

/** Parses JSON text; a syntax error becomes DATA_LOSS naming what was being read. */
export function parseJson(text: string, what: string, provider: string): unknown {
  try {
    const suspicious = text.includes('__proto__') || text.includes('\\u');
    return suspicious ? JSON.parse(text, withoutPollutingKeys) : JSON.parse(text);
  } catch (error) {
    const preview = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    throw new InfergateError(ErrorCode.DataLoss, `${provider} sent ${what} that is not JSON: ${preview}`, {
      cause: error,
      details: { provider },
    });
  }
}
