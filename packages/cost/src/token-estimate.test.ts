import { describe, expect, it } from 'vitest';
import { estimateTokens, heuristicTokens, openAiEncoding } from './token-estimate.js';

describe('token estimate', () => {
  it('chooses the OpenAI encoding by model family', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini-2024-07-18',
      'gpt-4.1-nano',
      'o3',
      'o4-mini',
      'o1',
      'gpt-5-mini',
    ])
      expect(openAiEncoding(model), model).toBe('o200k_base');
    for (const model of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo-0125'])
      expect(openAiEncoding(model), model).toBe('cl100k_base');
    for (const model of ['claude-sonnet-4-5', 'llama-3-70b', 'omni'])
      expect(openAiEncoding(model), model).toBeUndefined();
  });

  it('counts OpenAI chat input with the tokenizer, chat framing included', async () => {
    const messages = [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Hello world, how are you?' },
    ];
    const o200k = await estimateTokens({ model: 'gpt-4o', messages, maxTokens: 50 });
    expect(o200k).toEqual({ inputTokens: 22, outputTokens: 50, estimated: false, encoding: 'o200k_base' });
    const cl100k = await estimateTokens({ model: 'gpt-4', messages: [messages[1] as (typeof messages)[0]] });
    expect(cl100k.encoding).toBe('cl100k_base');
    expect(cl100k.inputTokens).toBe(14);
    expect(cl100k.outputTokens).toBe(1024);
  });

  it('uses a padded character heuristic for other models, flagged estimated', async () => {
    const messages = [{ role: 'user', content: 'x'.repeat(346) }];
    expect(heuristicTokens(messages)).toBe(Math.ceil((350 / 3.5) * 1.2) + 4);
    const estimate = await estimateTokens(
      { model: 'claude-haiku-4-5', messages },
      { defaultMaxOutputTokens: 256 },
    );
    expect(estimate).toEqual({ inputTokens: 124, outputTokens: 256, estimated: true, encoding: 'heuristic' });
  });

  it('does not throw on text that looks like special tokens', async () => {
    const estimate = await estimateTokens({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: '<|endoftext|> hi' }],
    });
    expect(estimate.inputTokens).toBeGreaterThan(0);
  });
});
