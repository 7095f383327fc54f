import { InfergateError } from '@infergate/core';
import { type ErrorMappingOptions, httpStatusOf, publicError } from './http-errors.js';
import type { HttpResponse } from './http-types.js';

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The `type` and `code` OpenAI uses for each kind of failure (its clients branch on the status). */
function typeAndCode(error: InfergateError, status: number): { type: string; code: string | null } {
  switch (error.code) {
    case 'UNAUTHENTICATED':
      return { type: 'invalid_request_error', code: 'invalid_api_key' };
    case 'PERMISSION_DENIED':
      return { type: 'permission_error', code: null };
    case 'NOT_FOUND':
      return { type: 'invalid_request_error', code: 'model_not_found' };
    case 'BUDGET_EXCEEDED':
      return { type: 'insufficient_quota', code: 'insufficient_quota' };
    case 'RATE_LIMITED':
      return { type: 'requests', code: 'rate_limit_exceeded' };
    case 'CONTEXT_LENGTH_EXCEEDED':
      return { type: 'invalid_request_error', code: 'context_length_exceeded' };
    case 'CONTENT_FILTERED':
      return { type: 'invalid_request_error', code: 'content_policy_violation' };
    default:
      if (status >= 400 && status < 500) return { type: 'invalid_request_error', code: null };
      return { type: 'server_error', code: null };
  }
}

/**
 * The OpenAI error body and HTTP status for anything thrown. Without a `requestId` the message is the
 * error's own. With one, the message follows the Express error handler's rules (`publicError`): a
 * 5xx's own message is logged with the request id (`options.logError`) and the client reads a generic
 * one naming that id, unless `options.exposeInternalErrors`; upstream addresses are removed from the
 * messages it does read.
 */
export function openAIError(
  thrown: unknown,
  requestId?: string,
  options: ErrorMappingOptions = {},
): {
  status: number;
  body: OpenAIErrorBody;
  error: InfergateError;
} {
  let error: InfergateError;
  let status: number;
  let message: string;
  if (requestId === undefined) {
    error = InfergateError.from(thrown);
    status = httpStatusOf(error, options);
    message = error.rawMessage;
  } else {
    const answer = publicError(thrown, requestId, options);
    ({ error, status } = answer);
    message = answer.body.message;
  }
  const param = typeof error.details?.param === 'string' ? error.details.param : null;
  return {
    status,
    body: { error: { message, ...typeAndCode(error, status), param } },
    error,
  };
}

/** Answers with OpenAI's error body (and Retry-After on 429/503), or ends a response already begun. */
export function sendOpenAIError(
  response: HttpResponse,
  thrown: unknown,
  requestId: string,
  options: ErrorMappingOptions = {},
): void {
  const { status, body, error } = openAIError(thrown, requestId, options);
  if (response.headersSent) {
    response.end();
    return;
  }
  if (status === 429 || status === 503) {
    const seconds = error.retryAfterMs === undefined ? 1 : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    response.setHeader('Retry-After', String(seconds));
  }
  response.statusCode = status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('X-Request-Id', requestId);
  response.end(JSON.stringify(body));
}
