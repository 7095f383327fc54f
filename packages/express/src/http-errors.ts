import { ErrorCode, InfergateError } from '@infergate/core';
import type { HttpResponse } from './http-types.js';

/** What is logged for an answer whose internal message the client does not see (every 5xx). */
export interface ErrorLogEntry {
  requestId: string;
  status: number;
  code: ErrorCode;
  /** The full message, as thrown. */
  message: string;
  error: unknown;
}

export interface ErrorMappingOptions {
  /** Status for BUDGET_EXCEEDED: 429 (default) or 402 Payment Required. */
  budgetExceededStatus?: 429 | 402;
  /**
   * Send a 5xx's own message to the client. Off, the client gets a generic message and the request
   * id, and the message goes to `logError`: internal messages carry addresses, hostnames and
   * whatever an upstream or your own code put in them. @default false
   */
  exposeInternalErrors?: boolean;
  /** Where a 5xx's message is logged, with the request id. @default one line on console.error */
  logError?: (entry: ErrorLogEntry) => void;
  /** The `WWW-Authenticate` challenge sent with a 401. @default 'Bearer realm="infergate"' */
  wwwAuthenticate?: string;
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

/** HTTP status of an error thrown by Express middleware (body-parser, http-errors) → our code. */
const codeByStatus: Readonly<Record<number, ErrorCode>> = {
  400: ErrorCode.InvalidArgument,
  401: ErrorCode.Unauthenticated,
  403: ErrorCode.PermissionDenied,
  404: ErrorCode.NotFound,
  408: ErrorCode.DeadlineExceeded,
  409: ErrorCode.Aborted,
  429: ErrorCode.RateLimited,
  499: ErrorCode.Cancelled,
  501: ErrorCode.Unimplemented,
  502: ErrorCode.Unavailable,
  503: ErrorCode.Unavailable,
  504: ErrorCode.DeadlineExceeded,
};

/** What the client reads instead of a 5xx's own message. */
const genericMessages: Readonly<Record<number, string>> = {
  500: 'internal error',
  501: 'not implemented',
  502: 'bad gateway: the upstream answer was not usable',
  503: 'service unavailable: try again later',
  504: 'gateway timeout: the upstream did not answer in time',
};

export function httpStatusOf(error: InfergateError, options: ErrorMappingOptions = {}): number {
  const explicit = error.details?.responseStatus;
  if (typeof explicit === 'number') return explicit;
  if (error.code === 'BUDGET_EXCEEDED') return options.budgetExceededStatus ?? 429;
  return statusByCode[error.code] ?? 500;
}

function statusOfThrown(thrown: unknown): number | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  const { status, statusCode } = thrown as { status?: unknown; statusCode?: unknown };
  const value = typeof status === 'number' ? status : statusCode;
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value <= 599
    ? value
    : undefined;
}

/**
 * Anything thrown, as an InfergateError with the HTTP status it answers with. An error carrying
 * `status`/`statusCode` (Express's body parsers, the http-errors package) keeps that status, and
 * its message only when `expose` is true (http-errors sets it for 4xx).
 */
export function toHttpError(
  thrown: unknown,
  options: ErrorMappingOptions = {},
): { error: InfergateError; status: number; expose: boolean } {
  if (thrown instanceof InfergateError) {
    const status = httpStatusOf(thrown, options);
    return { error: thrown, status, expose: status < 500 || options.exposeInternalErrors === true };
  }
  const status = statusOfThrown(thrown);
  if (status === undefined) {
    return { error: InfergateError.from(thrown), status: 500, expose: options.exposeInternalErrors === true };
  }
  const declared = (thrown as { expose?: unknown }).expose;
  const expose =
    (typeof declared === 'boolean' ? declared : status < 500) || options.exposeInternalErrors === true;
  const code = codeByStatus[status] ?? (status < 500 ? ErrorCode.InvalidArgument : ErrorCode.Unknown);
  const message = (thrown as { message?: unknown }).message;
  const error = new InfergateError(code, typeof message === 'string' ? message : `HTTP ${status}`, {
    cause: thrown,
    retryable: status === 408 || status === 429 || status === 503 || status === 504,
    details: { responseStatus: status },
  });
  return { error, status, expose };
}

/** The message the client reads: the error's own (without upstream addresses) or a generic one. */
function clientMessage(error: InfergateError, status: number, expose: boolean, requestId: string): string {
  if (!expose) {
    const generic = genericMessages[status] ?? (status < 500 ? 'the request was refused' : 'server error');
    return `${generic} (request id ${requestId})`;
  }
  const endpoint = error.endpoint;
  if (endpoint === undefined || endpoint === '') return error.rawMessage;
  // Upstream addresses are the gateway's business, not the client's.
  return error.rawMessage.split(` at ${endpoint}`).join('').split(endpoint).join('upstream');
}

function logInternal(entry: ErrorLogEntry): void {
  console.error(`[infergate] request ${entry.requestId}: ${entry.status} ${entry.code}: ${entry.message}`);
}

/**
 * The `{ code, message, requestId, retryable }` a client may read for an error (a 5xx's message
 * replaced and logged), with the status it maps to. For answers and for error events of a stream
 * already under way.
 */
export function publicError(
  thrown: unknown,
  requestId: string,
  options: ErrorMappingOptions = {},
): {
  error: InfergateError;
  status: number;
  body: { code: ErrorCode; message: string; requestId: string; retryable: boolean };
} {
  const { error, status, expose } = toHttpError(thrown, options);
  if (status >= 500) {
    (options.logError ?? logInternal)({
      requestId,
      status,
      code: error.code,
      message: error.message,
      error: thrown,
    });
  }
  const body = {
    code: error.code,
    message: clientMessage(error, status, expose, requestId),
    requestId,
    retryable: error.retryable,
  };
  return { error, status, body };
}

/** Default Retry-After (s) for busy answers that carry no hint of their own. */
const DEFAULT_RETRY_AFTER_S = 1;

/** Status, headers and JSON body of an error answer, shared by the Express and fetch handlers. */
export function errorAnswer(
  thrown: unknown,
  requestId: string,
  options: ErrorMappingOptions = {},
): { error: InfergateError; status: number; headers: Record<string, string>; body: string } {
  const { error, status, body: publicBody } = publicError(thrown, requestId, options);
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'x-request-id': requestId,
  };
  const retryAfterS =
    error.retryAfterMs !== undefined
      ? Math.max(1, Math.ceil(error.retryAfterMs / 1000))
      : status === 503 || status === 429
        ? DEFAULT_RETRY_AFTER_S
        : undefined;
  if (retryAfterS !== undefined) headers['retry-after'] = String(retryAfterS);
  if (status === 401) headers['www-authenticate'] = options.wwwAuthenticate ?? 'Bearer realm="infergate"';
  const body = JSON.stringify({ error: publicBody });
  return { error, status, headers, body };
}

/** Writes the JSON error body `{ error: { code, message, requestId, retryable } }` with Retry-After. */
export function sendError(
  response: HttpResponse,
  thrown: unknown,
  requestId: string,
  options: ErrorMappingOptions = {},
) {
  const { error, status, headers, body } = errorAnswer(thrown, requestId, options);
  if (response.headersSent) {
    response.destroy(error);
    return;
  }
  response.statusCode = status;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  response.end(body);
}
