/**
 * One error class for the whole SDK. `code` uses gRPC's status names plus a few SDK codes, so a
 * caller can switch on it whatever layer (transport, batcher, router, cost) raised the error.
 */

// error-code.js must load before network-errors.js, which reads ErrorCode at module load.
import { ErrorCode, isBackpressureCode, isRetryableCode } from './error-code.js';
import { networkErrorCode } from './network-errors.js';

export { ErrorCode, isBackpressureCode, isRetryableCode };

export interface InfergateErrorOptions {
  cause?: unknown;
  /** Overrides the default derived from `code`. */
  retryable?: boolean;
  model?: string;
  endpoint?: string;
  requestId?: string;
  /** gRPC status number, when the error came from a gRPC status. */
  grpcCode?: number;
  /**
   * The upstream HTTP status, when the error came from an HTTP response (a provider's 429, a
   * server's 503). Never the status an HTTP front door sends back: that is derived from `code`.
   */
  httpStatus?: number;
  /** Milliseconds the server asked us to wait before retrying (Retry-After). */
  retryAfterMs?: number;
  /** Extra structured facts (never secrets). */
  details?: Record<string, unknown>;
}

/** What `InfergateError.wrap` may change: any option, and the code and message. */
export interface InfergateErrorOverrides extends InfergateErrorOptions {
  code?: ErrorCode;
  /** The message without the `[CODE]` prefix. */
  message?: string;
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
   * Turns anything thrown into an InfergateError: an InfergateError is returned as it is;
   * AbortError → CANCELLED, TimeoutError → DEADLINE_EXCEEDED, a Node socket or DNS failure
   * (ECONNREFUSED, ENOTFOUND, …, found by walking `cause`) → UNAVAILABLE, everything else →
   * `fallback` (UNKNOWN), keeping the original as `cause`.
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
      return new InfergateError(networkErrorCode(error) ?? fallback, text, { cause: error });
    }
    return new InfergateError(networkErrorCode(error) ?? fallback, String(error), { cause: error });
  }

  /**
   * A copy of `error` (anything thrown goes through `from` first) with `overrides` applied; every
   * field not overridden is kept: code, message, cause, model, endpoint, requestId, grpcCode,
   * httpStatus, retryAfterMs, details. `retryable` is kept unless `code` or `retryable` is
   * overridden, then it follows the override. This is the one way to add context to an error.
   */
  static wrap(error: unknown, overrides: InfergateErrorOverrides = {}): InfergateError {
    const source = InfergateError.from(error);
    const { code = source.code, message = source.rawMessage, ...rest } = overrides;
    const options: InfergateErrorOptions = {};
    const keep = <K extends keyof InfergateErrorOptions>(key: K, value: InfergateErrorOptions[K]) => {
      if (value !== undefined) options[key] = value;
    };
    keep('cause', 'cause' in rest ? rest.cause : source.cause);
    keep('retryable', rest.retryable ?? (overrides.code === undefined ? source.retryable : undefined));
    keep('model', rest.model ?? source.model);
    keep('endpoint', rest.endpoint ?? source.endpoint);
    keep('requestId', rest.requestId ?? source.requestId);
    keep('grpcCode', rest.grpcCode ?? source.grpcCode);
    keep('httpStatus', rest.httpStatus ?? source.httpStatus);
    keep('retryAfterMs', rest.retryAfterMs ?? source.retryAfterMs);
    keep('details', rest.details ?? source.details);
    return new InfergateError(code, message, options);
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
