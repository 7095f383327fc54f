import { ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';
import { networkErrorCode } from '../network-errors.js';

/**
 * HTTP statuses and Triton's JSON error bodies → our codes: the one place that knows them, so an
 * HTTP call fails with the same code a gRPC call to the same server would.
 *
 * Triton answers most refusals with 400 whatever their cause (an unknown model, a bad shape, a full
 * queue), so the text decides within a status, with the same wording rules as the gRPC mapping.
 */
const byStatus: Readonly<Record<number, ErrorCode>> = {
  400: ErrorCode.InvalidArgument,
  401: ErrorCode.Unauthenticated,
  403: ErrorCode.PermissionDenied,
  404: ErrorCode.NotFound,
  405: ErrorCode.Unimplemented,
  408: ErrorCode.DeadlineExceeded,
  409: ErrorCode.AlreadyExists,
  413: ErrorCode.InvalidArgument,
  429: ErrorCode.ResourceExhausted,
  499: ErrorCode.Cancelled,
  500: ErrorCode.Internal,
  501: ErrorCode.Unimplemented,
  502: ErrorCode.Unavailable,
  503: ErrorCode.Unavailable,
  504: ErrorCode.DeadlineExceeded,
};

/** Wording that overrides the status (Triton puts these under 400/500/503). */
const byText: ReadonlyArray<readonly [RegExp, ErrorCode]> = [
  [/exceeds maximum queue size/i, ErrorCode.QueueFull],
  [/request timeout expired/i, ErrorCode.DeadlineExceeded],
  [/this protocol is restricted/i, ErrorCode.PermissionDenied],
  [/(unknown model|is not found|no version|unknown request model)/i, ErrorCode.NotFound],
  [/not ready/i, ErrorCode.Unavailable],
  [/(not implemented|not supported for http|does not support|unsupported)/i, ErrorCode.Unimplemented],
  [/already (exists|registered)/i, ErrorCode.AlreadyExists],
  [/cancel/i, ErrorCode.Cancelled],
];

function statusCode(status: number): ErrorCode {
  const exact = byStatus[status];
  if (exact !== undefined) return exact;
  if (status >= 500) return ErrorCode.Internal;
  if (status >= 400) return ErrorCode.InvalidArgument;
  return ErrorCode.Unknown;
}

/** Triton's error body is `{"error": "<text>"}` (FastAPI servers such as MLServer: `{"detail": …}`); anything else is kept as text. */
export function errorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; detail?: unknown } | null;
    if (typeof parsed?.error === 'string') return parsed.error;
    if (typeof parsed?.detail === 'string') return parsed.detail;
  } catch {
    // not JSON: the text itself
  }
  const text = body.trim();
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** The error an HTTP response with a non-2xx status stands for. */
export function fromHttpStatus(
  status: number,
  body: string,
  context: InfergateErrorOptions = {},
  retryAfterMs?: number,
): InfergateError {
  const text = errorText(body) || `HTTP ${status}`;
  let code = statusCode(status);
  // Only refine generic statuses: a 404 stays NOT_FOUND, a 401 stays UNAUTHENTICATED.
  if (code === ErrorCode.InvalidArgument || code === ErrorCode.Internal || code === ErrorCode.Unavailable) {
    const refined = byText.find(([pattern]) => pattern.test(text))?.[1];
    // "not ready" means UNAVAILABLE only when the status did not already say it is the caller's fault.
    if (refined !== undefined && !(refined === ErrorCode.Unavailable && code === ErrorCode.InvalidArgument)) {
      code = refined;
    }
  }
  const where = context.model
    ? ` (model '${context.model}'${context.endpoint ? ` at ${context.endpoint}` : ''})`
    : '';
  return new InfergateError(code, `${text}${where}`, {
    ...context,
    httpStatus: status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/**
 * A `fetch` that threw: an abort (the scope's typed reason), or a network failure. Runtimes word the
 * latter differently (Node: "fetch failed" with the socket error as cause; Deno, Bun, workerd: their
 * own TypeErrors), so any TypeError from fetch is UNAVAILABLE — the request never got an answer.
 */
export function fromFetchFailure(
  error: unknown,
  signal: AbortSignal | undefined,
  context: InfergateErrorOptions,
): InfergateError {
  if (error instanceof InfergateError) return error;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof InfergateError) return reason;
    return InfergateError.from(error, ErrorCode.Cancelled);
  }
  const network = networkErrorCode(error);
  if (network !== undefined || error instanceof TypeError) {
    const message = error instanceof Error ? error.message : String(error);
    return new InfergateError(
      network ?? ErrorCode.Unavailable,
      `cannot reach ${context.endpoint ?? 'the server'}: ${message}`,
      {
        ...context,
        cause: error,
      },
    );
  }
  return InfergateError.from(error);
}
