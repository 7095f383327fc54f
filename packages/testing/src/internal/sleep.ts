import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { RpcError } from '../rpc-error.js';
import { status } from './grpc-status.js';

const cancelled = () => new RpcError(status.CANCELLED, 'cancelled while waiting');

/**
 * Waits `ms` (a model's delay parameter: any length, beyond setTimeout's 2^31 − 1 ms too); an abort
 * ends the wait early with CANCELLED.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!(ms > 0)) return Promise.resolve();
  if (signal?.aborted) return Promise.reject(cancelled());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearLongTimer(timer);
      reject(cancelled());
    };
    const timer = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
