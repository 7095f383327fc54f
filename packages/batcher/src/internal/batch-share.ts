import type { CallOptions } from '@infergate/core';

/**
 * The slot a cost interceptor above the batcher puts in a call's context (the same
 * `Symbol.for` key as @infergate/cost's BATCH_SHARE_CONTEXT, without depending on that package).
 * The batcher fills it when the call's batch returns, so each caller pays its rows' share of the
 * execution instead of the whole batch's time.
 */
export const BATCH_SHARE_SLOT: unique symbol = Symbol.for('infergate.cost.batchShare');

export interface BatchShareSlot {
  rows: number;
  batchRows: number;
  computeNs?: number | bigint;
}

export function reportBatchShare(options: CallOptions, share: BatchShareSlot): void {
  const slot = options.context?.get(BATCH_SHARE_SLOT);
  if (typeof slot === 'object' && slot !== null) Object.assign(slot, share);
}
