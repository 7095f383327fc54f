import { ErrorCode, InfergateError } from '@infergate/core';

/**
 * What the router does with a failed attempt. The one place that maps error codes and HTTP
 * statuses to routing behaviour (see the table in README.md).
 *
 * - `failure`: counts against the target's breaker, falls back, may be retried.
 * - `backpressure`: busy, not broken — falls back and cools the target, never counts a failure.
 * - `reject`: the request itself is wrong — returned at once, no retry, no fallback, no trip.
 * - `cancelled`: the caller aborted (or its own deadline passed) — returned at once.
 * - `context-length`: falls back only to targets with a larger `contextWindow`.
 * - `too-late`: the target refused the call before sending it because the call's deadline is closer
 *   than the target takes (a micro-batcher's `details.reason: 'deadline-too-close'`) — falls back to
 *   another target within the deadline; the target is not tried again for this call, never blamed,
 *   never cooled, and no retry pass follows it.
 */
export type ErrorClass = 'failure' | 'backpressure' | 'reject' | 'cancelled' | 'context-length' | 'too-late';

/** `details.reason` of an error a target raised before sending because the deadline was too close. */
export const DEADLINE_TOO_CLOSE = 'deadline-too-close';

const rejectCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCode.InvalidArgument,
  ErrorCode.NotFound,
  ErrorCode.AlreadyExists,
  ErrorCode.PermissionDenied,
  ErrorCode.FailedPrecondition,
  ErrorCode.OutOfRange,
  ErrorCode.Unimplemented,
  ErrorCode.Unauthenticated,
  ErrorCode.BudgetExceeded,
  ErrorCode.PriceUnknown,
  ErrorCode.ContentFiltered,
]);

/** HTTP statuses that say "this request is wrong", whatever code an adapter chose. */
const rejectStatuses: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 413, 415, 422]);
/** HTTP statuses that say "busy": 429 Too Many Requests, 529 Anthropic overloaded. */
const backpressureStatuses: ReadonlySet<number> = new Set([429, 529]);

/**
 * Anything thrown by a target, as an InfergateError (Node socket errors become UNAVAILABLE).
 * @deprecated use `InfergateError.from`, which maps network errors itself; removed in 1.0.
 */
export function toInfergateError(error: unknown): InfergateError {
  return InfergateError.from(error);
}

/** Classifies an error a target returned; `callerAborted` wins over everything. */
export function classifyError(error: InfergateError, callerAborted = false): ErrorClass {
  if (callerAborted) return 'cancelled';
  if (error.code === ErrorCode.ContextLengthExceeded) return 'context-length';
  if (error.code === ErrorCode.DeadlineExceeded && error.details?.reason === DEADLINE_TOO_CLOSE)
    return 'too-late';
  // A nested router's BREAKER_OPEN means "nothing there right now": skip it without blaming it.
  if (error.backpressure || error.code === ErrorCode.BreakerOpen) return 'backpressure';
  const status = error.httpStatus;
  if (status !== undefined && backpressureStatuses.has(status)) return 'backpressure';
  if (rejectCodes.has(error.code)) return 'reject';
  if (status !== undefined && rejectStatuses.has(status)) return 'reject';
  // UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN, DATA_LOSS, ABORTED, CANCELLED not asked for
  // by the caller (e.g. the server went away mid-call), HTTP 5xx.
  return 'failure';
}

/** HTTP statuses of a gateway that could not reach (or lost) its upstream. */
const gatewayStatuses: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * A failure that says the endpoint itself is unreachable or gone (connection refused or reset,
 * GOAWAY, a channel in TRANSIENT_FAILURE: all UNAVAILABLE; HTTP 502/503/504), as opposed to one
 * request going wrong. A few in a row take the endpoint out of rotation at once
 * (`breaker.consecutiveGatewayFailures`).
 */
export function isGatewayFailure(error: InfergateError): boolean {
  if (error.backpressure) return false;
  if (error.code === ErrorCode.Unavailable) return true;
  return error.httpStatus !== undefined && gatewayStatuses.has(error.httpStatus);
}
