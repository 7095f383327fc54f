import { describe, expect, it } from 'vitest';
import { PriceCatalog } from './price-catalog.js';
import type { PriceEntry } from './price-schema.js';
import { priceUsage, tokenCounts } from './token-cost.js';

const catalog = new PriceCatalog();
const at = Date.parse('2025-10-01T00:00:00Z');
const price = (model: string) => catalog.lookup({ model, at }) as PriceEntry;

describe('token cost', () => {
  it('charges uncached input, cache reads and writes, output and reasoning at their own prices', () => {
    const entry: PriceEntry = {
      model: 'm',
      provider: 'p',
      input: 10,
      cacheRead: 1,
      cacheWrite5m: 12.5,
      output: 40,
      reasoning: 80,
      source: 's',
      date: '2025-01-01',
    };
    const cost = priceUsage(entry, {
      inputTokens: 1_000_000,
      cacheReadTokens: 200_000,
      cacheWriteTokens: 100_000,
      outputTokens: 300_000,
      reasoningTokens: 100_000,
    });
    expect(cost.tokens.uncachedInput).toBe(700_000);
    expect(cost.parts.input).toBeCloseTo(7);
    expect(cost.parts.cacheRead).toBeCloseTo(0.2);
    expect(cost.parts.cacheWrite).toBeCloseTo(1.25);
    expect(cost.parts.output).toBeCloseTo(8);
    expect(cost.parts.reasoning).toBeCloseTo(8);
    expect(cost.usd).toBeCloseTo(24.45);
    expect(cost.estimated).toBe(false);
  });

  it('reasoning defaults to the output price; missing cache prices fall back to input', () => {
    const entry: PriceEntry = {
      model: 'm',
      provider: 'p',
      input: 2,
      output: 8,
      source: 's',
      date: '2025-01-01',
    };
    const cost = priceUsage(entry, {
      inputTokens: 1000,
      cacheReadTokens: 500,
      outputTokens: 1000,
      reasoningTokens: 600,
    });
    expect(cost.usd).toBeCloseTo((1000 * 2 + 1000 * 8) / 1e6);
  });

  it('OpenAI: prompt_tokens include cached_tokens (gpt-4o, real-shaped usage)', () => {
    // Chat Completions usage: prompt_tokens 2006 with prompt_tokens_details.cached_tokens 1920.
    const raw = {
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
    const cost = priceUsage(price('gpt-4o-2024-08-06'), {
      inputTokens: 2006,
      outputTokens: 300,
      cacheReadTokens: 1920,
      cacheWriteTokens: undefined,
      reasoningTokens: 0,
      raw,
    });
    // 86 uncached × $2.50 + 1920 cached × $1.25 + 300 × $10, per million.
    expect(cost.usd).toBeCloseTo((86 * 2.5 + 1920 * 1.25 + 300 * 10) / 1e6, 12);
  });

  it('OpenAI o-series: reasoning tokens are part of completion tokens, charged once', () => {
    const cost = priceUsage(price('o4-mini'), {
      inputTokens: 1000,
      outputTokens: 5000,
      cacheReadTokens: 0,
      cacheWriteTokens: undefined,
      reasoningTokens: 4500,
      raw: { completion_tokens_details: { reasoning_tokens: 4500 } },
    });
    expect(cost.usd).toBeCloseTo((1000 * 1.1 + 5000 * 4.4) / 1e6, 12);
  });

  it('Anthropic: input_tokens exclude cache tokens; the adapter adds them; 1h writes priced apart', () => {
    // Messages API usage as received; ChatUsage.inputTokens = 10 + 1000 + 5000.
    const raw = {
      input_tokens: 10,
      cache_creation_input_tokens: 1000,
      cache_read_input_tokens: 5000,
      cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 600 },
      output_tokens: 200,
    };
    const usage = {
      inputTokens: 6010,
      outputTokens: 200,
      cacheReadTokens: 5000,
      cacheWriteTokens: 1000,
      reasoningTokens: undefined,
      raw,
    };
    const cost = priceUsage(price('claude-sonnet-4-5-20250929'), usage);
    expect(cost.tokens).toMatchObject({
      uncachedInput: 10,
      cacheRead: 5000,
      cacheWrite5m: 400,
      cacheWrite1h: 600,
    });
    expect(cost.usd).toBeCloseTo((10 * 3 + 5000 * 0.3 + 400 * 3.75 + 600 * 6 + 200 * 15) / 1e6, 12);
  });

  it('an adapter that reports input without cache tokens is not charged negative input', () => {
    const { tokens } = tokenCounts({
      inputTokens: 10,
      outputTokens: 1,
      cacheReadTokens: 5000,
      cacheWriteTokens: 0,
    });
    expect(tokens.uncachedInput).toBe(10);
    expect(tokens.totalInput).toBe(5010);
  });

  it('applies the long-context tier to the whole request above the threshold', () => {
    const entry = price('claude-sonnet-4-5');
    const small = priceUsage(entry, { inputTokens: 200_000, outputTokens: 1000 });
    const large = priceUsage(entry, { inputTokens: 200_001, outputTokens: 1000 });
    expect(small.tierAboveInputTokens).toBeUndefined();
    expect(small.usd).toBeCloseTo((200_000 * 3 + 1000 * 15) / 1e6, 12);
    expect(large.tierAboveInputTokens).toBe(200_000);
    expect(large.usd).toBeCloseTo((200_001 * 6 + 1000 * 22.5) / 1e6, 12);
    // Cached tokens count toward the threshold.
    const cached = priceUsage(entry, { inputTokens: 250_000, cacheReadTokens: 240_000, outputTokens: 0 });
    expect(cached.usd).toBeCloseTo((10_000 * 6 + 240_000 * 0.6) / 1e6, 12);
  });

  it('batch and priority modifiers multiply the cost', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };
    const entry = price('gpt-5');
    expect(priceUsage(entry, usage).usd).toBeCloseTo(11.25);
    expect(priceUsage(entry, usage, { serviceTier: 'batch' }).usd).toBeCloseTo(5.625);
    expect(priceUsage(entry, usage, { serviceTier: 'priority' }).usd).toBeCloseTo(22.5);
    expect(priceUsage(price('gpt-4.1-nano'), usage, { serviceTier: 'priority' }).usd).toBeCloseTo(0.5);
  });

  it('unknown counts are treated as 0 and flag the cost as estimated', () => {
    const cost = priceUsage(price('gpt-4o'), { inputTokens: 100, outputTokens: undefined });
    expect(cost.estimated).toBe(true);
    expect(cost.usd).toBeCloseTo(250 / 1e6, 12);
  });
});
