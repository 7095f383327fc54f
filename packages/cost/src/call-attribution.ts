import { type CallOptions, createContextKey, getContextValue } from '@infergate/core';
import type { Attribution } from './budget.js';

/**
 * Context key under which a caller puts the API key (or caller id) for budgets scoped by `key`:
 * `context: new Map([[API_KEY_CONTEXT, 'key_123']])`.
 */
export const API_KEY_CONTEXT = createContextKey<string>('infergate.cost.apiKey');

/** tenant from CallOptions.tenant, key from the API_KEY_CONTEXT value. */
export function attributionOf(options: CallOptions | undefined, model: string | undefined): Attribution {
  const key: unknown = getContextValue(options?.context, API_KEY_CONTEXT);
  return { tenant: options?.tenant, key: typeof key === 'string' ? key : undefined, model };
}
