import { describe, expect, it } from 'vitest';
import { candidateNames, PriceCatalog } from './price-catalog.js';
import type { PriceEntry } from './price-schema.js';

const at = Date.parse('2025-09-01T00:00:00Z');

describe('PriceCatalog', () => {
  const catalog = new PriceCatalog();

  it('finds built-in OpenAI and Anthropic models by exact name', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-4.1-mini',
      'gpt-4.1-nano',
      'o3',
      'o4-mini',
      'gpt-5',
      'gpt-5-mini',
      'gpt-5-nano',
      'claude-3-5-sonnet',
      'claude-3-7-sonnet',
      'claude-sonnet-4',
      'claude-opus-4',
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'claude-opus-4-5',
    ])
      expect(catalog.lookup({ model, at })?.model, model).toBe(model);
  });

  it('prices dated snapshots as their base model, never a longer name as a shorter one', () => {
    expect(catalog.lookup({ model: 'gpt-4o-2024-08-06', at })?.model).toBe('gpt-4o');
    expect(catalog.lookup({ model: 'gpt-4o-mini-2024-07-18', at })?.model).toBe('gpt-4o-mini');
    expect(catalog.lookup({ model: 'claude-sonnet-4-5-20250929', at })?.model).toBe('claude-sonnet-4-5');
    expect(catalog.lookup({ model: 'claude-3-5-sonnet-20241022', at })?.model).toBe('claude-3-5-sonnet');
    expect(catalog.lookup({ model: 'claude-3-7-sonnet-latest', at })?.model).toBe('claude-3-7-sonnet');
    expect(catalog.lookup({ model: 'claude-3-5-sonnet@20240620', at })?.model).toBe('claude-3-5-sonnet');
    expect(catalog.lookup({ model: 'openai/gpt-4.1-2025-04-14', at })?.model).toBe('gpt-4.1');
    expect(catalog.lookup({ model: 'gpt-4o-mini-transcribe', at })).toBeUndefined();
    expect(candidateNames('anthropic/claude-opus-4-1-20250805')).toEqual([
      'anthropic/claude-opus-4-1-20250805',
      'claude-opus-4-1-20250805',
      'claude-opus-4-1',
    ]);
  });

  it('matches explicit aliases', () => {
    expect(catalog.lookup({ model: 'claude-3.5-sonnet', at })?.model).toBe('claude-3-5-sonnet');
    expect(catalog.lookup({ model: 'claude-sonnet-4-0', at })?.model).toBe('claude-sonnet-4');
    expect(catalog.lookup({ model: 'gpt-5-chat-latest', at })?.model).toBe('gpt-5');
  });

  it('picks the entry in force at the call time', () => {
    const before = catalog.lookup({ model: 'o3', at: Date.parse('2025-05-01T00:00:00Z') });
    const after = catalog.lookup({ model: 'o3-2025-04-16', at: Date.parse('2025-06-10T00:00:00Z') });
    expect(before?.input).toBe(10);
    expect(after?.input).toBe(2);
    const sonnet46 = (day: string) =>
      catalog.lookup({ model: 'claude-sonnet-4-6', at: Date.parse(`${day}T12:00:00Z`) });
    expect(sonnet46('2026-03-12')?.tiers).toHaveLength(1);
    expect(sonnet46('2026-03-13')?.tiers).toBeUndefined();
  });

  it('filters by provider when one is given', () => {
    expect(catalog.lookup({ model: 'gpt-4o', provider: 'anthropic', at })).toBeUndefined();
    expect(catalog.lookup({ model: 'gpt-4o', provider: 'openai', at })?.model).toBe('gpt-4o');
  });

  it('every built-in entry names its source and date', () => {
    for (const entry of catalog.entries()) {
      expect(entry.source).toMatch(/^https:\/\//);
      expect(entry.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('registered entries override built-in ones and add new models; the resolver comes first', () => {
    const custom = new PriceCatalog();
    const entry: PriceEntry = {
      model: 'gpt-4o',
      provider: 'openai',
      input: 1,
      output: 2,
      source: 'contract',
      date: '2025-01-01',
    };
    custom.register([entry, { ...entry, model: 'my-llama', provider: 'vllm' }]);
    expect(custom.lookup({ model: 'gpt-4o-2024-11-20', at })?.input).toBe(1);
    expect(custom.lookup({ model: 'my-llama', at })?.provider).toBe('vllm');
    custom.resolver = ({ model }) => (model === 'gpt-4o' ? { ...entry, input: 42 } : undefined);
    expect(custom.lookup({ model: 'gpt-4o', at })?.input).toBe(42);
    expect(custom.lookup({ model: 'my-llama', at })?.input).toBe(1);
  });

  it('rejects invalid entries with the field named', () => {
    const bad = {
      model: 'x',
      provider: 'p',
      input: 1,
      output: 1,
      source: 's',
      date: '2025-01-01',
      tiers: [
        { aboveInputTokens: 200_000, input: 2 },
        { aboveInputTokens: 100_000, input: 3 },
      ],
    };
    expect(() => new PriceCatalog({ prices: [bad] })).toThrow(/tiers must be sorted/);
    expect(() => new PriceCatalog({ prices: [{ ...bad, tiers: [], input: -1 }] })).toThrow();
    expect(() => new PriceCatalog({ prices: [{ ...bad, tiers: [], date: 'yesterday' }] })).toThrow(
      /YYYY-MM-DD/,
    );
  });
});
