import { abortError, InfergateError, type InfergateErrorOptions } from '../errors.js';
import { fromGrpcStatus } from '../grpc-status.js';
import type { CallOptions } from '../transport.js';
import type * as GrpcWire from './grpc-wire.js';
import { loadGrpcWire } from './lazy-modules.js';
import { clearLongTimer, type LongTimer, setLongTimeout } from './long-timer.js';

/** grpc-wire.ts, and the call's options with what is left of its deadline once it loaded. */
export interface LoadedForCall<O extends CallOptions = CallOptions> {
  wire: typeof GrpcWire;
  options: O;
}

/** The error a call's deadline ends it with, worded as the engines word theirs. */
export function deadlineExceeded(context: InfergateErrorOptions): InfergateError {
  return fromGrpcStatus({ code: 4, details: 'Deadline exceeded' }, context);
}

/**
 * Waits for grpc-wire.ts (lazy-modules.ts) on behalf of a call made before it loaded. The call's
 * deadline counts from here, the load included: the options handed back carry only what is left of
 * it, and a load that outlasts it rejects with DEADLINE_EXCEEDED. An abort during the load rejects
 * at once with CANCELLED (or the signal's reason), as an abort during the call does.
 * `defaultTimeoutMs` is the client's `timeoutMs`, for calls that give none of their own.
 */
export function waitForGrpcWire<O extends CallOptions>(
  options: O,
  defaultTimeoutMs: number | undefined,
  context: InfergateErrorOptions,
): Promise<LoadedForCall<O>> {
  const startedAt = performance.now();
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  // An invalid timeout is left to the call, which refuses it with its own message; Infinity is none.
  const bounded = timeoutMs !== undefined && timeoutMs > 0 && timeoutMs !== Number.POSITIVE_INFINITY;
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(abortError(signal, context));
  return new Promise<LoadedForCall<O>>((resolve, reject) => {
    let timer: LongTimer | undefined;
    const settle = () => {
      if (timer !== undefined) clearLongTimer(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      settle();
      reject(abortError(signal as AbortSignal, context));
    };
    if (bounded) {
      timer = setLongTimeout(() => {
        settle();
        reject(deadlineExceeded(context));
      }, timeoutMs);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    loadGrpcWire().then(
      (wire) => {
        settle();
        if (!bounded) return resolve({ wire, options });
        // Whole milliseconds: grpc-timeout is sent in them.
        const left = Math.floor(timeoutMs - (performance.now() - startedAt));
        if (left < 1) return reject(deadlineExceeded(context));
        resolve({ wire, options: { ...options, timeoutMs: left } });
      },
      (error: unknown) => {
        settle();
        reject(InfergateError.from(error));
      },
    );
  });
}
