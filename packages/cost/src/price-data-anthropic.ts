import type { PriceEntry } from './price-schema.js';

// Figures from the MIT-licensed data of pydantic/genai-prices (prices/providers/anthropic.yml, commit
// 47df840a), which cites https://www.anthropic.com/pricing#api; `date` is its prices_checked date.
// Message Batches API: 50 % off. Dated snapshots ("claude-sonnet-4-5-20250929") match by suffix.
const SOURCE = 'https://github.com/pydantic/genai-prices/blob/main/prices/providers/anthropic.yml';
const DATE = '2026-07-29';
const BATCH = { batch: 0.5 } as const;

/** Sonnet-class prices: $3 input, $15 output, cache read 0.1×, write 1.25× (5 min) and 2× (1 h). */
const sonnet = { input: 3, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6, output: 15 } as const;
const sonnetLongContext = {
  aboveInputTokens: 200_000,
  input: 6,
  cacheRead: 0.6,
  cacheWrite5m: 7.5,
  cacheWrite1h: 12,
  output: 22.5,
} as const;
const opus4 = { input: 15, cacheRead: 1.5, cacheWrite5m: 18.75, cacheWrite1h: 30, output: 75 } as const;
const opus45 = { input: 5, cacheRead: 0.5, cacheWrite5m: 6.25, cacheWrite1h: 10, output: 25 } as const;
const opusLongContext = {
  aboveInputTokens: 200_000,
  input: 10,
  cacheRead: 1,
  cacheWrite5m: 12.5,
  cacheWrite1h: 20,
  output: 37.5,
} as const;
const common = { provider: 'anthropic', modifiers: BATCH, source: SOURCE, date: DATE } as const;

export const ANTHROPIC_PRICES: readonly PriceEntry[] = [
  {
    model: 'claude-3-haiku',
    ...common,
    input: 0.25,
    cacheRead: 0.03,
    cacheWrite5m: 0.3,
    cacheWrite1h: 0.5,
    output: 1.25,
  },
  { model: 'claude-3-opus', ...common, ...opus4 },
  {
    model: 'claude-3-5-haiku',
    aliases: ['claude-3.5-haiku'],
    ...common,
    input: 0.8,
    cacheRead: 0.08,
    cacheWrite5m: 1,
    cacheWrite1h: 1.6,
    output: 4,
  },
  { model: 'claude-3-5-sonnet', aliases: ['claude-3.5-sonnet'], ...common, ...sonnet },
  { model: 'claude-3-7-sonnet', aliases: ['claude-3.7-sonnet', 'claude-sonnet-3-7'], ...common, ...sonnet },
  { model: 'claude-sonnet-4', aliases: ['claude-sonnet-4-0', 'claude-4-sonnet'], ...common, ...sonnet },
  { model: 'claude-opus-4', aliases: ['claude-opus-4-0', 'claude-4-opus'], ...common, ...opus4 },
  { model: 'claude-opus-4-1', aliases: ['claude-opus-4.1'], ...common, ...opus4 },
  {
    model: 'claude-sonnet-4-5',
    aliases: ['claude-sonnet-4.5', 'claude-4-5-sonnet'],
    ...common,
    ...sonnet,
    tiers: [sonnetLongContext],
  },
  {
    model: 'claude-haiku-4-5',
    aliases: ['claude-haiku-4.5', 'claude-4-5-haiku'],
    ...common,
    input: 1,
    cacheRead: 0.1,
    cacheWrite5m: 1.25,
    cacheWrite1h: 2,
    output: 5,
  },
  { model: 'claude-opus-4-5', aliases: ['claude-opus-4.5', 'claude-4-5-opus'], ...common, ...opus45 },
  // 4.6: the long-context (> 200k) surcharge was removed on 2026-03-13 (https://claude.com/blog/1m-context-ga).
  {
    model: 'claude-sonnet-4-6',
    aliases: ['claude-sonnet-4.6'],
    ...common,
    ...sonnet,
    tiers: [sonnetLongContext],
  },
  {
    model: 'claude-sonnet-4-6',
    aliases: ['claude-sonnet-4.6'],
    ...common,
    ...sonnet,
    effectiveFrom: '2026-03-13',
  },
  { model: 'claude-opus-4-6', aliases: ['claude-opus-4.6'], ...common, ...opus45, tiers: [opusLongContext] },
  {
    model: 'claude-opus-4-6',
    aliases: ['claude-opus-4.6'],
    ...common,
    ...opus45,
    effectiveFrom: '2026-03-13',
  },
];
