import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mergeAnthropicUsage, normalizeAnthropicUsage, normalizeOpenAIUsage } from './usage.js';

const json = (name: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as { usage: never };

describe('OpenAI usage', () => {
  it('keeps cached tokens inside inputTokens and reports them as cache reads', () => {
    const usage = normalizeOpenAIUsage(json('openai-chat-completion-cached-reasoning.json').usage);
    expect(usage).toMatchObject({
      inputTokens: 2006,
      outputTokens: 300,
      cacheReadTokens: 1920,
      cacheWriteTokens: undefined,
      reasoningTokens: 256,
    });
    expect(usage.raw).toEqual(json('openai-chat-completion-cached-reasoning.json').usage);
  });

  it('reports zero as zero and missing as undefined', () => {
    expect(normalizeOpenAIUsage(json('openai-chat-completion.json').usage)).toMatchObject({
      inputTokens: 19,
      outputTokens: 10,
      cacheReadTokens: 0,
      reasoningTokens: 0,
    });
    expect(normalizeOpenAIUsage({ prompt_tokens: 5 })).toMatchObject({
      inputTokens: 5,
      outputTokens: undefined,
      cacheReadTokens: undefined,
      reasoningTokens: undefined,
    });
    expect(normalizeOpenAIUsage(undefined).inputTokens).toBeUndefined();
  });
});

describe('Anthropic usage', () => {
  it('adds cache writes and reads to input_tokens', () => {
    expect(normalizeAnthropicUsage(json('anthropic-message.json').usage)).toMatchObject({
      inputTokens: 21 + 188086,
      outputTokens: 393,
      cacheReadTokens: 0,
      cacheWriteTokens: 188086,
      reasoningTokens: undefined,
    });
    expect(normalizeAnthropicUsage(json('anthropic-message-cache-read.json').usage)).toMatchObject({
      inputTokens: 3 + 188086,
      outputTokens: 1024,
      cacheReadTokens: 188086,
      cacheWriteTokens: 0,
    });
  });

  it('merges message_start input usage with message_delta cumulative output', () => {
    const start = {
      input_tokens: 25,
      cache_read_input_tokens: 1800,
      cache_creation_input_tokens: 0,
      output_tokens: 1,
    };
    const merged = normalizeAnthropicUsage(mergeAnthropicUsage(start, { output_tokens: 15 }));
    expect(merged).toMatchObject({
      inputTokens: 1825,
      outputTokens: 15,
      cacheReadTokens: 1800,
      cacheWriteTokens: 0,
    });
  });

  it('leaves cache fields undefined when Anthropic omits them', () => {
    expect(normalizeAnthropicUsage({ input_tokens: 10, output_tokens: 2 })).toMatchObject({
      inputTokens: 10,
      cacheReadTokens: undefined,
      cacheWriteTokens: undefined,
    });
  });
});
