import { abortError } from '@infergate/core';

/**
 * Waits for `work` until `signal` aborts, then rejects with the signal's typed reason (CANCELLED or
 * DEADLINE_EXCEEDED) without waiting further. Work already sent cannot be recalled: when it still
 * succeeds after the caller gave up, `onLateSuccess` undoes it (a reservation nobody will settle).
 */
export function abortable<T>(
  work: Promise<T> | T,
  signal: AbortSignal | undefined,
  onLateSuccess?: (value: T) => unknown,
): Promise<T> | T {
  if (signal === undefined || !(work instanceof Promise)) return work;
  if (signal.aborted) return rejectLate(work, signal, onLateSuccess);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      rejectLate(work, signal, onLateSuccess).catch(reject);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function rejectLate<T>(
  work: Promise<T>,
  signal: AbortSignal,
  onLateSuccess: ((value: T) => unknown) | undefined,
): Promise<never> {
  work.then(
    (value) => {
      try {
        Promise.resolve(onLateSuccess?.(value)).catch(() => {});
      } catch {
        // Undoing is best effort: an expiring reservation frees itself at its TTL.
      }
    },
    () => {},
  );
  return Promise.reject(abortError(signal));
}

/** Throws the signal's typed reason when it has already aborted: a store sends nothing then. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}
