import { abortError, raceSignal } from '@infergate/core';

/**
 * Waits for `work` until `signal` aborts (core's `raceSignal`), for store calls that may answer
 * synchronously: a value that is not a promise is returned as it is. When the work still succeeds
 * after the caller gave up, `onLateSuccess` undoes it (a reservation nobody will settle; an expiring
 * reservation frees itself at its TTL if undoing fails).
 */
export function abortable<T>(
  work: Promise<T> | T,
  signal: AbortSignal | undefined,
  onLateSuccess?: (value: T) => unknown,
): Promise<T> | T {
  if (!(work instanceof Promise)) return work;
  return raceSignal(work, signal, onLateSuccess);
}

/** Throws the signal's typed reason when it has already aborted: a store sends nothing then. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}
