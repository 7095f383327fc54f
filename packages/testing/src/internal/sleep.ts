import { setTimeout as delay } from 'node:timers/promises';
import { RpcError } from '../rpc-error.js';
import { status } from './grpc-status.js';

/** Waits `ms`; an abort ends the wait early with CANCELLED. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    if (signal?.aborted) throw new RpcError(status.CANCELLED, 'cancelled while waiting');
    throw error;
  }
}
