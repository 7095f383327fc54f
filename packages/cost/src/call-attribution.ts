import type { CallOptions } from '@infergate/core';
import type { Attribution } from './budget.js';

/**
 * Context key under which a caller puts the API key (or caller id) for budgets scoped by `key`:
 * `context: new Map([[API_KEY_CONTEXT, 'key_123']])`.
 */
export const API_KEY_CONTEXT: unique symbol = Symbol.for('infergate.cost.apiKey');

/**
 * Context key of a call's batch share `{ rows, batchRows, computeNs? }` (computeNs of the whole
 * execution). costInterceptor puts an empty slot under it; @infergate/batcher fills the slot when
 * the call's batch returns, so each call pays its rows' share of the execution.
 */
export const BATCH_SHARE_CONTEXT: unique symbol = Symbol.for('infergate.cost.batchShare');

export interface BatchShare {
  rows: number;
  batchRows: number;
  computeNs?: number | bigint;
}

/** tenant from CallOptions.tenant, key from the API_KEY_CONTEXT value. */
export function attributionOf(options: CallOptions | undefined, model: string | undefined): Attribution {
  const key = options?.context?.get(API_KEY_CONTEXT);
  return { tenant: options?.tenant, key: typeof key === 'string' ? key : undefined, model };
}

export function batchShareOf(options: CallOptions | undefined): BatchShare | undefined {
  const share = options?.context?.get(BATCH_SHARE_CONTEXT) as BatchShare | undefined;
  return share && share.batchRows > 0 ? share : undefined;
}
