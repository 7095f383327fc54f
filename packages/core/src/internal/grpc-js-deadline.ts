// Deadlines on the grpc-js engine. grpc-js writes grpc-timeout in at most 8 digits of hours (a
// deadline beyond that fails the call with an unhandled "Deadline is too far in the future" that
// never settles it), and arms no timer of its own for a deadline beyond setTimeout's 2^31 − 1 ms (it
// leaves it to the server's grpc-timeout).
import type * as grpc from '@grpc/grpc-js';
import { type LongTimer, MAX_TIMER_MS, setLongTimeout } from './long-timer.js';

/** The longest grpc-timeout grpc-js can write: 99999999 hours, in ms. */
const GRPC_JS_MAX_TIMEOUT_MS = 99_999_999 * 3_600_000;

/** grpc-js call options for a deadline `timeoutMs` from now (none when undefined), capped to what grpc-js can write. */
export function grpcJsDeadline(timeoutMs: number | undefined): grpc.CallOptions {
  return timeoutMs === undefined
    ? {}
    : { deadline: Date.now() + Math.min(timeoutMs, GRPC_JS_MAX_TIMEOUT_MS) };
}

/** True for a deadline grpc-js arms no timer for (beyond 2^31 − 1 ms), which needs ours. */
export function beyondGrpcJsTimer(timeoutMs: number | undefined): timeoutMs is number {
  return timeoutMs !== undefined && timeoutMs > MAX_TIMER_MS;
}

/**
 * Our timer for a deadline grpc-js arms none for (beyond 2^31 − 1 ms): `onExpire(arg)` when it is due,
 * whatever the server does; undefined when grpc-js's own timer covers the deadline. Unref'd, as
 * grpc-js's own: the call, not its deadline, holds the process.
 */
export function armBeyondGrpcJs<T>(
  timeoutMs: number | undefined,
  onExpire: (arg: T) => void,
  arg: T,
): LongTimer | undefined {
  if (!beyondGrpcJsTimer(timeoutMs)) return undefined;
  const timer = setLongTimeout(onExpire, timeoutMs, arg);
  timer?.unref();
  return timer;
}

/** Ends a grpc-js stream whose deadline passed with DEADLINE_EXCEEDED (as grpc-js's own deadline does). */
export function expireStream<Req, Res>(call: grpc.ClientDuplexStream<Req, Res>): void {
  const inner = (call as { call?: { cancelWithStatus(code: number, details: string): void } }).call;
  if (inner === undefined) call.cancel();
  else inner.cancelWithStatus(4, 'Deadline exceeded');
}
