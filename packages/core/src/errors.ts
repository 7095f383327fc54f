/**
 * One error class for the whole SDK. `code` uses gRPC's status names plus a few SDK codes, so a
 * caller can switch on it whatever layer (transport, batcher, router, cost) raised the error.
 */

export const ErrorCode = {
  Cancelled: 'CANCELLED',
  Unknown: 'UNKNOWN',
  InvalidArgument: 'INVALID_ARGUMENT',
  DeadlineExceeded: 'DEADLINE_EXCEEDED',
  NotFound: 'NOT_FOUND',
  AlreadyExists: 'ALREADY_EXISTS',
  PermissionDenied: 'PERMISSION_DENIED',
  ResourceExhausted: 'RESOURCE_EXHAUSTED',
  FailedPrecondition: 'FAILED_PRECONDITION',
  Aborted: 'ABORTED',
  OutOfRange: 'OUT_OF_RANGE',
  Unimplemented: 'UNIMPLEMENTED',
  Internal: 'INTERNAL',
  Unavailable: 'UNAVAILABLE',
  DataLoss: 'DATA_LOSS',
  Unauthenticated: 'UNAUTHENTICATED',
  // SDK codes
  QueueFull: 'QUEUE_FULL',
  BudgetExceeded: 'BUDGET_EXCEEDED',
  BreakerOpen: 'BREAKER_OPEN',
  PriceUnknown: 'PRICE_UNKNOWN',
  RateLimited: 'RATE_LIMITED',
  Overloaded: 'OVERLOADED',
  ContextLengthExceeded: 'CONTEXT_LENGTH_EXCEEDED',
  ContentFiltered: 'CONTENT_FILTERED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Codes that mean "try again later": the request itself was fine. */
const retryableCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCode.Unavailable,
  ErrorCode.ResourceExhausted,
  ErrorCode.Aborted,
  ErrorCode.QueueFull,
  ErrorCode.RateLimited,
  ErrorCode.Overloaded,
  ErrorCode.BreakerOpen,
]);

/**
 * Codes that mean "the target is busy, not broken": a router falls back without counting a failure
 * and cools the target instead of tripping its breaker.
 */
const backpressureCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCode.QueueFull,
  ErrorCode.RateLimited,
  ErrorCode.Overloaded,
  ErrorCode.ResourceExhausted,
]);

export function isRetryableCode(code: ErrorCode): boolean {
  return retryableCodes.has(code);
}

export function isBackpressureCode(code: ErrorCode): boolean {
  return backpressureCodes.has(code);
}

export interface InfergateErrorOptions {
  cause?: unknown;
  /** Overrides the default derived from `code`. */
  retryable?: boolean;
  model?: string;
  endpoint?: string;
  requestId?: string;
  /** gRPC status number, when the error came from a gRPC status. */
  grpcCode?: number;
  /** HTTP status, when the error came from an HTTP response. */
  httpStatus?: number;
  /** Milliseconds the server asked us to wait before retrying (Retry-After). */
  retryAfterMs?: number;
  /** Extra structured facts (never secrets). */
  details?: Record<string, unknown>;
}

const brand = Symbol.for('@infergate/core/InfergateError');

export class InfergateError extends Error {
  override readonly name = 'InfergateError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly model: string | undefined;
  readonly endpoint: string | undefined;
  readonly requestId: string | undefined;
  readonly grpcCode: number | undefined;
  readonly httpStatus: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** The message without the `[CODE]` prefix. */
  readonly rawMessage: string;

  constructor(code: ErrorCode, message: string, options: InfergateErrorOptions = {}) {
    super(`[${code}] ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.rawMessage = message;
    this.retryable = options.retryable ?? isRetryableCode(code);
    this.model = options.model;
    this.endpoint = options.endpoint;
    this.requestId = options.requestId;
    this.grpcCode = options.grpcCode;
    this.httpStatus = options.httpStatus;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
    Object.defineProperty(this, brand, { value: true });
  }

  /** True for busy-not-broken errors (queue full, rate limited, overloaded). */
  get backpressure(): boolean {
    return isBackpressureCode(this.code);
  }

  /** `instanceof` that also recognises errors from another copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /**
   * Turns anything thrown into an InfergateError: AbortError → CANCELLED, TimeoutError →
   * DEADLINE_EXCEEDED, everything else → UNKNOWN (keeping the original as `cause`).
   */
  static from(error: unknown, fallback: ErrorCode = ErrorCode.Unknown): InfergateError {
    if (error instanceof InfergateError) return error;
    if (error instanceof Error || (typeof error === 'object' && error !== null && 'name' in error)) {
      const name = (error as { name?: unknown }).name;
      const message = (error as { message?: unknown }).message;
      const text = typeof message === 'string' && message !== '' ? message : String(name);
      if (name === 'TimeoutError')
        return new InfergateError(ErrorCode.DeadlineExceeded, text, { cause: error });
      if (name === 'AbortError') return new InfergateError(ErrorCode.Cancelled, text, { cause: error });
      return new InfergateError(fallback, text, { cause: error });
    }
    return new InfergateError(fallback, String(error), { cause: error });
  }

  /** Plain object for logs and HTTP bodies; never includes `cause` (it may hold secrets). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.rawMessage,
      retryable: this.retryable,
      model: this.model,
      endpoint: this.endpoint,
      requestId: this.requestId,
      retryAfterMs: this.retryAfterMs,
      backpressure: this.backpressure,
      grpcCode: this.grpcCode,
      httpStatus: this.httpStatus,
    };
  }
}

// Bundlers rename a class that refers to itself (`class _InfergateError`); logs, `util.inspect`
// and stack headers read the constructor's name, so set it. The prototype's `name` is there before
// the constructor runs, when V8 writes the stack header.
Object.defineProperty(InfergateError, 'name', { value: 'InfergateError', configurable: true });
Object.defineProperty(InfergateError.prototype, 'name', {
  value: 'InfergateError',
  writable: true,
  configurable: true,
});

/** The error an aborted signal stands for: its reason if it is already typed, else CANCELLED. */
export function abortError(signal: AbortSignal, context: InfergateErrorOptions = {}): InfergateError {
  const reason: unknown = signal.reason;
  if (reason instanceof InfergateError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new InfergateError(ErrorCode.DeadlineExceeded, 'the call timed out', {
      ...context,
      cause: reason,
    });
  }
  return new InfergateError(ErrorCode.Cancelled, 'the call was cancelled', { ...context, cause: reason });
}
