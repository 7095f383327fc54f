import { type ErrorCode, InfergateError } from '@infergate/core';
import type { HttpResponse } from './http-types.js';

export interface ErrorMappingOptions {
  /** Status for BUDGET_EXCEEDED: 429 (default) or 402 Payment Required. */
  budgetExceededStatus?: 429 | 402;
}

/** InfergateError codes → HTTP status. The one place the SDK's codes meet HTTP. */
const statusByCode: Partial<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  OUT_OF_RANGE: 400,
  FAILED_PRECONDITION: 400,
  CONTEXT_LENGTH_EXCEEDED: 400,
  CONTENT_FILTERED: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  CANCELLED: 499,
  RATE_LIMITED: 429,
  BUDGET_EXCEEDED: 429,
  UNIMPLEMENTED: 501,
  DATA_LOSS: 502,
  QUEUE_FULL: 503,
  BREAKER_OPEN: 503,
  UNAVAILABLE: 503,
  OVERLOADED: 503,
  RESOURCE_EXHAUSTED: 503,
  DEADLINE_EXCEEDED: 504,
};

export function httpStatusOf(error: InfergateError, options: ErrorMappingOptions = {}): number {
  const explicit = error.details?.responseStatus;
  if (typeof explicit === 'number') return explicit;
  if (error.code === 'BUDGET_EXCEEDED') return options.budgetExceededStatus ?? 429;
  return statusByCode[error.code] ?? 500;
}

/** Default Retry-After (s) for busy answers that carry no hint of their own. */
const DEFAULT_RETRY_AFTER_S = 1;

/** Writes the JSON error body `{ error: { code, message, requestId, retryable } }` with Retry-After. */
export function sendError(
  response: HttpResponse,
  thrown: unknown,
  requestId: string,
  options: ErrorMappingOptions = {},
) {
  const error = InfergateError.from(thrown);
  const status = httpStatusOf(error, options);
  if (response.headersSent) {
    response.destroy(error);
    return;
  }
  const retryAfterS =
    error.retryAfterMs !== undefined
      ? Math.max(1, Math.ceil(error.retryAfterMs / 1000))
      : status === 503 || status === 429
        ? DEFAULT_RETRY_AFTER_S
        : undefined;
  if (retryAfterS !== undefined) response.setHeader('Retry-After', String(retryAfterS));
  response.statusCode = status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('X-Request-Id', requestId);
  response.end(
    JSON.stringify({
      error: { code: error.code, message: error.rawMessage, requestId, retryable: error.retryable },
    }),
  );
}
