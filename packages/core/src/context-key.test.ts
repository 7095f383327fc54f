import { describe, expect, it } from 'vitest';
import { BATCH_SHARE_CONTEXT, batchShareOf, reportBatchShare } from './batch-share.js';
import { createContextKey, getContextValue, withContextValue } from './context-key.js';

describe('context keys', () => {
  it('finds the same key for the same name, so two package copies agree', () => {
    const a = createContextKey<string>('@acme/test.user');
    const b = createContextKey<string>('@acme/test.user');
    expect(a).toBe(b);
    expect(createContextKey<string>('@acme/test.other')).not.toBe(a);
    expect(getContextValue(new Map([[a, 'ada']]), b)).toBe('ada');
    expect(getContextValue(undefined, a)).toBeUndefined();
  });

  it('sets a value on a copy and leaves the caller map alone', () => {
    const key = createContextKey<number>('@acme/test.count');
    const original = new Map<string | symbol, unknown>([['other', 1]]);
    const next = withContextValue(original, key, 3);
    expect(getContextValue(next, key)).toBe(3);
    expect(next.get('other')).toBe(1);
    expect(original.has(key)).toBe(false);
  });

  it('lets the batcher fill the batch-share slot a cost interceptor put down', () => {
    const slot = { rows: 0, batchRows: 0 };
    const options = { context: withContextValue(undefined, BATCH_SHARE_CONTEXT, slot) };
    expect(batchShareOf(options)).toBeUndefined();
    reportBatchShare(options, { rows: 2, batchRows: 8, computeNs: 100 });
    expect(batchShareOf(options)).toEqual({ rows: 2, batchRows: 8, computeNs: 100 });
    reportBatchShare({}, { rows: 1, batchRows: 1 });
  });
});
