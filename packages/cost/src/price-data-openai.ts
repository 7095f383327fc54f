import type { PriceEntry } from './price-schema.js';

// Figures from the MIT-licensed data of pydantic/genai-prices (prices/providers/openai.yml, commit
// 47df840a), which cites OpenAI's pricing pages; `date` is its prices_checked date. Batch API: 50 %
// off. Priority processing multipliers from https://platform.openai.com/docs/pricing (priority tier).
const GENAI_PRICES = 'https://github.com/pydantic/genai-prices/blob/main/prices/providers/openai.yml';
const OPENAI_PRICING = 'https://platform.openai.com/docs/pricing';
const BATCH = { batch: 0.5 } as const;

/** What most entries share: the provider, the source, the Batch API discount and the check date. */
const checkedOn = (date: string) =>
  ({ provider: 'openai', modifiers: BATCH, source: GENAI_PRICES, date }) as const;
const JULY_2025 = checkedOn('2025-07-04');
const NOVEMBER_2025 = checkedOn('2025-11-13');

export const OPENAI_PRICES: readonly PriceEntry[] = [
  {
    model: 'gpt-5',
    ...NOVEMBER_2025,
    aliases: ['gpt-5-chat-latest', 'gpt-5-codex'],
    input: 1.25,
    cacheRead: 0.125,
    output: 10,
    modifiers: { ...BATCH, priority: 2 },
  },
  { model: 'gpt-5-mini', ...NOVEMBER_2025, input: 0.25, cacheRead: 0.025, output: 2 },
  { model: 'gpt-5-nano', ...NOVEMBER_2025, input: 0.05, cacheRead: 0.005, output: 0.4 },
  {
    model: 'gpt-5.1',
    ...NOVEMBER_2025,
    aliases: ['gpt-5.1-chat-latest', 'gpt-5.1-codex', 'gpt-5-1'],
    input: 1.25,
    cacheRead: 0.125,
    output: 10,
  },
  {
    model: 'gpt-4.1',
    ...JULY_2025,
    input: 2,
    cacheRead: 0.5,
    output: 8,
    modifiers: { ...BATCH, priority: 1.75 },
  },
  {
    model: 'gpt-4.1-mini',
    ...JULY_2025,
    input: 0.4,
    cacheRead: 0.1,
    output: 1.6,
    modifiers: { ...BATCH, priority: 1.75 },
  },
  { model: 'gpt-4.1-nano', ...JULY_2025, input: 0.1, cacheRead: 0.025, output: 0.4 },
  {
    model: 'gpt-4o',
    ...JULY_2025,
    input: 2.5,
    cacheRead: 1.25,
    output: 10,
    modifiers: { ...BATCH, priority: 1.7 },
  },
  { model: 'gpt-4o-mini', ...JULY_2025, input: 0.15, cacheRead: 0.075, output: 0.6 },
  {
    // Launch price; genai-prices lists a 0.5 cached price for this period, OpenAI's launch table 2.5.
    model: 'o3',
    ...checkedOn('2025-07-12'),
    input: 10,
    cacheRead: 2.5,
    output: 40,
    source: `${OPENAI_PRICING} (launch, 2025-04-16)`,
  },
  {
    // "o3 is 80% cheaper": https://community.openai.com/t/o3-is-80-cheaper-and-introducing-o3-pro/1284925
    model: 'o3',
    ...checkedOn('2025-07-12'),
    effectiveFrom: '2025-06-10',
    input: 2,
    cacheRead: 0.5,
    output: 8,
  },
  { model: 'o3-mini', ...JULY_2025, input: 1.1, cacheRead: 0.55, output: 4.4 },
  { model: 'o4-mini', ...JULY_2025, input: 1.1, cacheRead: 0.275, output: 4.4 },
  { model: 'o1', ...JULY_2025, aliases: ['o1-preview'], input: 15, cacheRead: 7.5, output: 60 },
  {
    model: 'gpt-4-turbo',
    ...JULY_2025,
    aliases: ['gpt-4-turbo-preview', 'gpt-4-0125-preview', 'gpt-4-1106-preview'],
    input: 10,
    output: 30,
  },
  { model: 'gpt-4', ...JULY_2025, aliases: ['gpt-4-0613', 'gpt-4-0314'], input: 30, output: 60 },
  {
    model: 'gpt-3.5-turbo',
    ...JULY_2025,
    aliases: ['gpt-3.5-turbo-0125', 'gpt-35-turbo'],
    input: 0.5,
    output: 1.5,
  },
];
