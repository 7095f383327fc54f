import { ErrorCode, InfergateError } from '@infergate/core';
import { z } from 'zod';
import { redactSecrets } from './internal/redact.js';
import { type HeaderSource, parseRetryAfter } from './retry-after.js';

/**
 * The one place that maps LLM providers' HTTP failures to InfergateError codes. OpenAI,
 * OpenAI-compatible servers (vLLM, Triton's OpenAI frontend) and Anthropic all come through here.
 */

/** What a provider's error body says, in either vendor's shape. */
export interface ProviderErrorBody {
  message: string | undefined;
  /** OpenAI `error.type` ("invalid_request_error"), Anthropic `error.type` ("overloaded_error"). */
  type: string | undefined;
  /** OpenAI `error.code` ("context_length_exceeded", "rate_limit_exceeded", …). */
  code: string | undefined;
}

const errorObject = z.object({
  message: z.string().optional(),
  type: z.string().nullish(),
  code: z.union([z.string(), z.number()]).nullish(),
});
// OpenAI: {"error": {...}}; Anthropic: {"type": "error", "error": {...}}; some servers: {"message": ...}.
const errorEnvelope = z.union([z.object({ error: errorObject }), errorObject]);

/** Reads an error body (JSON or not) into its message, type and code. */
export function parseErrorBody(text: string): ProviderErrorBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const trimmed = text.trim().slice(0, 200);
    return { message: trimmed === '' ? undefined : trimmed, type: undefined, code: undefined };
  }
  const parsed = errorEnvelope.safeParse(json);
  if (!parsed.success) return { message: undefined, type: undefined, code: undefined };
  const body = 'error' in parsed.data ? parsed.data.error : parsed.data;
  return {
    message: body.message,
    type: body.type ?? undefined,
    code: body.code === undefined || body.code === null ? undefined : String(body.code),
  };
}

const contextLengthPatterns = [
  /maximum context length/i,
  /context[_ ]length/i,
  /prompt is too long/i,
  /context window/i,
  /(input|prompt).{0,40}tokens?.{0,40}(exceed|maximum|too (long|many)|limit)/i,
];

function isContextLength(body: ProviderErrorBody): boolean {
  if (body.code === 'context_length_exceeded' || body.code === 'string_above_max_length') return true;
  return (
    body.message !== undefined && contextLengthPatterns.some((pattern) => pattern.test(body.message ?? ''))
  );
}

function isContentFilter(body: ProviderErrorBody): boolean {
  return body.code === 'content_filter' || body.code === 'content_policy_violation';
}

function isOverloaded(body: ProviderErrorBody): boolean {
  return body.type === 'overloaded_error' || /overloaded/i.test(body.message ?? '');
}

/** The code an HTTP status and error body stand for. */
export function codeForHttpError(status: number, body: ProviderErrorBody): ErrorCode {
  if (status >= 500 && isOverloaded(body)) return ErrorCode.Overloaded;
  switch (status) {
    case 400:
    case 413:
    case 422:
      if (isContextLength(body)) return ErrorCode.ContextLengthExceeded;
      if (isContentFilter(body)) return ErrorCode.ContentFiltered;
      return ErrorCode.InvalidArgument;
    case 401:
      return ErrorCode.Unauthenticated;
    case 403:
      return isContentFilter(body) ? ErrorCode.ContentFiltered : ErrorCode.PermissionDenied;
    case 404:
      return ErrorCode.NotFound;
    case 408:
      return ErrorCode.Unavailable;
    case 409:
      return ErrorCode.Aborted;
    case 429:
      return ErrorCode.RateLimited;
    case 501:
      return ErrorCode.Unimplemented;
    case 529:
      return ErrorCode.Overloaded;
    default:
      if (status >= 500) return ErrorCode.Unavailable;
      if (status >= 400) return ErrorCode.InvalidArgument;
      return ErrorCode.Unknown;
  }
}

/** The code of an error event inside a stream (Anthropic `event: error`), by its type. */
export function codeForStreamError(body: ProviderErrorBody): ErrorCode {
  switch (body.type) {
    case 'overloaded_error':
      return ErrorCode.Overloaded;
    case 'rate_limit_error':
      return ErrorCode.RateLimited;
    case 'api_error':
    case 'server_error':
      return ErrorCode.Unavailable;
    case 'invalid_request_error':
      return isContextLength(body) ? ErrorCode.ContextLengthExceeded : ErrorCode.InvalidArgument;
    case 'authentication_error':
      return ErrorCode.Unauthenticated;
    case 'permission_error':
      return ErrorCode.PermissionDenied;
    case 'not_found_error':
      return ErrorCode.NotFound;
    default:
      return isOverloaded(body) ? ErrorCode.Overloaded : ErrorCode.Unknown;
  }
}

export interface HttpErrorContext {
  /** gen_ai.provider.name of the adapter ("openai", "anthropic", …). */
  provider: string;
  model?: string;
  endpoint?: string;
  /** Strings that must never appear in the error (API keys). */
  secrets: readonly string[];
  /** The header holding the provider's request id ("x-request-id", "request-id"). */
  requestIdHeader?: string;
  now?: number;
}

/** Builds the InfergateError for a non-2xx response (status, headers and body text). */
export function httpError(
  status: number,
  headers: HeaderSource,
  bodyText: string,
  context: HttpErrorContext,
): InfergateError {
  const body = parseErrorBody(bodyText);
  const code = codeForHttpError(status, body);
  const retryAfterMs = parseRetryAfter(headers, context.now);
  const requestId = headers.get(context.requestIdHeader ?? 'x-request-id') ?? undefined;
  // OpenAI's 429 "insufficient_quota" is a billing state: waiting does not help.
  const retryable = body.code === 'insufficient_quota' ? false : undefined;
  const text = redactSecrets(body.message ?? `HTTP ${status}`, context.secrets);
  const details: Record<string, unknown> = { provider: context.provider };
  if (body.type !== undefined) details.type = body.type;
  if (body.code !== undefined) details.providerCode = body.code;
  return new InfergateError(code, `${context.provider} answered HTTP ${status}: ${text}`, {
    httpStatus: status,
    details,
    ...(retryable === undefined ? {} : { retryable }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(context.model === undefined ? {} : { model: context.model }),
    ...(context.endpoint === undefined ? {} : { endpoint: context.endpoint }),
  });
}
