import {
  abortError,
  ErrorCode,
  InfergateError,
  type InfergateErrorOptions,
  networkErrorCode,
} from '@infergate/core';
import type { ChatCallOptions } from '../types.js';
import { redactSecrets } from './redact.js';

export interface CallScopeContext {
  provider: string;
  model: string;
  endpoint?: string;
  secrets: readonly string[];
}

/**
 * One call's lifetime: an AbortController that the caller's signal, the deadline and an early
 * exit from a stream all abort, and the one place that turns whatever was thrown into an
 * InfergateError (CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE for socket errors, …).
 */
export class CallScope {
  readonly #controller = new AbortController();
  readonly #userSignal: AbortSignal | undefined;
  readonly #context: CallScopeContext;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  #onUserAbort: (() => void) | undefined;

  constructor(options: ChatCallOptions, defaultTimeoutMs: number | undefined, context: CallScopeContext) {
    this.#context = context;
    this.#userSignal = options.signal;
    if (options.signal?.aborted) throw abortError(options.signal, this.errorOptions());
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    if (timeoutMs !== undefined) {
      if (!(timeoutMs > 0)) {
        throw new InfergateError(ErrorCode.InvalidArgument, `timeoutMs must be positive, got ${timeoutMs}`);
      }
      this.#timer = setTimeout(() => {
        this.#timedOut = true;
        this.#controller.abort(
          new InfergateError(ErrorCode.DeadlineExceeded, `the call did not finish within ${timeoutMs} ms`, {
            ...this.errorOptions(),
            details: { timeoutMs },
          }),
        );
      }, timeoutMs);
    }
    if (options.signal) {
      const signal = options.signal;
      this.#onUserAbort = () => this.#controller.abort(abortError(signal, this.errorOptions()));
      signal.addEventListener('abort', this.#onUserAbort, { once: true });
    }
  }

  /** Aborts when the caller aborts, the deadline passes or `abort()` is called. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Ends the call early (a stream consumer left its loop); idempotent. */
  abort(): void {
    if (!this.#controller.signal.aborted) {
      this.#controller.abort(
        new InfergateError(ErrorCode.Cancelled, 'the stream was closed by its consumer', this.errorOptions()),
      );
    }
  }

  /** Stops the timer and detaches from the caller's signal. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#onUserAbort) this.#userSignal?.removeEventListener('abort', this.#onUserAbort);
    this.#onUserAbort = undefined;
  }

  errorOptions(): InfergateErrorOptions {
    const { model, endpoint } = this.#context;
    return { model, ...(endpoint === undefined ? {} : { endpoint }) };
  }

  /** Errors raised below the adapter (a schema check, the transport) get the call's model and endpoint. */
  withContext(error: InfergateError): InfergateError {
    const { model, endpoint } = this.#context;
    if (error.model !== undefined && (error.endpoint !== undefined || endpoint === undefined)) return error;
    return InfergateError.wrap(error, {
      model: error.model ?? model,
      ...((error.endpoint ?? endpoint) === undefined ? {} : { endpoint: error.endpoint ?? endpoint }),
    });
  }

  /** Whatever was thrown during the call, as an InfergateError without secrets. */
  toError(error: unknown): InfergateError {
    const signal = this.#controller.signal;
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      if (reason instanceof InfergateError) return reason;
      if (this.#timedOut) {
        return new InfergateError(ErrorCode.DeadlineExceeded, 'the call timed out', this.errorOptions());
      }
      return abortError(signal, this.errorOptions());
    }
    if (error instanceof InfergateError) return this.withContext(error);
    const text = redactSecrets(error instanceof Error ? error.message : String(error), this.#context.secrets);
    const network = networkErrorCode(error);
    if (network !== undefined) {
      return new InfergateError(network, `${this.#context.provider}: ${describeNetwork(error, text)}`, {
        ...this.errorOptions(),
        cause: error,
      });
    }
    return new InfergateError(ErrorCode.Unknown, `${this.#context.provider}: ${text}`, {
      ...this.errorOptions(),
      cause: error,
    });
  }
}

/** fetch says "fetch failed" / "terminated"; the socket error in `cause` says what happened. */
function describeNetwork(error: unknown, text: string): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.message === 'string') {
    const code = typeof cause.code === 'string' ? ` (${cause.code})` : '';
    return `${text}: ${cause.message}${code}`;
  }
  return text;
}
