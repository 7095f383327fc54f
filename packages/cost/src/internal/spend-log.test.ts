import { describe, expect, it } from 'vitest';
import type { SpendEntry } from '../budget-store.js';
import { SpendLog } from './spend-log.js';

function entry(at: number, fields: Partial<SpendEntry> = {}): SpendEntry {
  return {
    at,
    tenant: 'acme',
    key: undefined,
    model: 'gpt-4o',
    provider: 'openai',
    costUsd: at / 1000,
    inputTokens: at,
    outputTokens: 1,
    reservationId: `r-${at}`,
    ...fields,
  };
}

describe('SpendLog', () => {
  it('gives back what was pushed, an unknown price and absent token counts included', () => {
    const log = new SpendLog(10);
    const pushed = [
      entry(1),
      entry(2, { costUsd: null, inputTokens: undefined, outputTokens: undefined, tenant: undefined }),
      entry(3, { costUsd: 0, inputTokens: 0, reservationId: undefined, key: 'k' }),
    ];
    for (const item of pushed) log.push(item);
    expect(log.entries()).toStrictEqual(pushed);
  });

  it('keeps the latest entries, oldest first, once more were pushed than it holds', () => {
    const log = new SpendLog(100);
    for (let at = 1; at <= 250; at++) log.push(entry(at));
    const kept = log.entries();
    expect(kept).toHaveLength(100);
    expect(kept.map((item) => item.at)).toEqual(Array.from({ length: 100 }, (_, i) => 151 + i));
    expect(kept[0]).toStrictEqual(entry(151));
  });
});
