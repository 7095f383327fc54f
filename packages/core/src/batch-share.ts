import { createContextKey, getContextValue } from './context-key.js';
import type { CallOptions } from './transport.js';

/** One call's part of a batched execution: its rows, the batch's rows, the batch's compute time. */
export interface BatchShare {
  rows: number;
  batchRows: number;
  /** compute_infer of the whole execution, when the server reported it. */
  computeNs?: number | bigint;
}

/**
 * Context key of a call's batch share. A cost interceptor above a batcher puts an empty slot under
 * it; the batcher fills the slot when the call's batch returns, so each call pays its rows' share
 * of the execution instead of the whole batch's time. Both sides import this one key from core.
 * (The registered name predates the key's move to core; keeping it lets older batchers fill it.)
 */
export const BATCH_SHARE_CONTEXT = createContextKey<BatchShare>('infergate.cost.batchShare');

/** The filled batch share of a call; undefined when no batcher filled it. */
export function batchShareOf(options: CallOptions | undefined): BatchShare | undefined {
  const share = getContextValue(options?.context, BATCH_SHARE_CONTEXT);
  return share !== undefined && share.batchRows > 0 ? share : undefined;
}

/** Fills the slot a cost interceptor put in the call's context; nothing when there is no slot. */
export function reportBatchShare(options: CallOptions, share: BatchShare): void {
  const slot = getContextValue(options.context, BATCH_SHARE_CONTEXT);
  if (typeof slot === 'object' && slot !== null) Object.assign(slot, share);
}
