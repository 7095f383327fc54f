import { type Fields, hasOnlyKeys, isObject } from '@infergate/core/internal/option-checks';

// Reads createRateLimitWatch() options as its schema does (rate-limit-watch.ts), answering "valid,
// resolved to this" or undefined (then the schema decides and words the error). Decision 0025.

const KEYS = new Set(['fetch', 'minRemainingRequests', 'minRemainingTokens']);

function count(value: unknown): number | undefined {
  if (value === undefined) return 1;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

export function acceptRateLimitWatchOptions(input: unknown):
  | {
      fetch?: typeof globalThis.fetch | undefined;
      minRemainingRequests: number;
      minRemainingTokens: number;
    }
  | undefined {
  if (!isObject(input) || !hasOnlyKeys(input, KEYS)) return undefined;
  const resolved: Fields = {};
  if ('fetch' in input) {
    if (input.fetch !== undefined && typeof input.fetch !== 'function') return undefined;
    resolved.fetch = input.fetch;
  }
  const minRemainingRequests = count(input.minRemainingRequests);
  const minRemainingTokens = count(input.minRemainingTokens);
  if (minRemainingRequests === undefined || minRemainingTokens === undefined) return undefined;
  return Object.assign(resolved, { minRemainingRequests, minRemainingTokens }) as never;
}
