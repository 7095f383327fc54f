import { ErrorCode, heuristicTokens } from '@infergate/core';
import { estimateTokens } from '@infergate/cost';
import type { ChatModel, ChatRequest, ChatStreamEvent } from '@infergate/llm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chatAnswer } from '../../../test/unit/router-fakes.js';
import { estimateChatCost, promptTokens } from './chat-price.js';
import { createChatRouter } from './chat-router.js';

// English prose: a tokenizer counts about a token per 4 characters, the padded heuristic about one per 3.
const request: ChatRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(60) }],
  maxTokens: 1,
};
const heuristic = heuristicTokens(request.messages);
/** USD per million tokens, as @infergate/cost's PriceCatalog answers. */
const gpt4o = { input: 2.5, output: 10 };

afterEach(() => {
  vi.doUnmock('@infergate/cost');
  vi.resetModules();
});

describe('chat price estimate', () => {
  it('counts an OpenAI prompt with gpt-tokenizer when it is installed, other models with the heuristic', async () => {
    const exact = await estimateTokens(request);
    // gpt-tokenizer is installed in this workspace (a dev dependency of @infergate/cost).
    expect(exact.estimated).toBe(false);
    const tokens = await promptTokens(request, ['gpt-4o', 'claude-3-haiku', 'gpt-4o']);
    expect(tokens.get('gpt-4o')).toBe(exact.inputTokens);
    expect(exact.inputTokens).toBeLessThan(heuristic);
    expect(tokens.get('claude-3-haiku')).toBe(heuristic);
  });

  it('uses the padded heuristic when no tokenizer loads', async () => {
    const tokens = await promptTokens(request, ['gpt-4o'], async () => undefined);
    expect(tokens.get('gpt-4o')).toBe(heuristic);
  });

  it('uses the padded heuristic when @infergate/cost is not installed', async () => {
    vi.doMock('@infergate/cost', () => {
      throw new Error("Cannot find package '@infergate/cost'");
    });
    const fresh = await import('./chat-price.js');
    expect(await fresh.loadCostTokenCounter()).toBeUndefined();
    expect((await fresh.promptTokens(request, ['gpt-4o'])).get('gpt-4o')).toBe(heuristic);
  });

  it('lets the chat router’s price guard admit a call its tokenizer count fits, though the heuristic’s would not', async () => {
    const exact = (await estimateTokens(request)).inputTokens;
    const byTokenizer = estimateChatCost({ lookup: () => gpt4o }, 'gpt-4o', request, exact) ?? 0;
    const byHeuristic = estimateChatCost({ lookup: () => gpt4o }, 'gpt-4o', request) ?? 0;
    expect(byTokenizer).toBeLessThan(byHeuristic);
    let calls = 0;
    const model: ChatModel = {
      provider: 'openai',
      defaultModel: 'gpt-4o',
      async chat(chat) {
        calls += 1;
        return chatAnswer('gpt-4o', chat.model);
      },
      async *chatStream() {
        calls += 1;
        yield { type: 'text-delta', text: 'gpt-4o' } as ChatStreamEvent;
      },
    };
    const chat = createChatRouter({
      targets: [{ name: 'openai', model }],
      prices: { lookup: (query) => (query.model === 'gpt-4o' ? gpt4o : undefined) },
    });
    try {
      const cap = (byTokenizer + byHeuristic) / 2;
      expect((await chat.chat(request, { maxCostUsd: cap })).text).toBe('gpt-4o');
      expect(calls).toBe(1);
      // A cap under the tokenizer's estimate still refuses the call before it reaches the model.
      await expect(chat.chat(request, { maxCostUsd: byTokenizer / 2 })).rejects.toMatchObject({
        code: ErrorCode.BudgetExceeded,
      });
      expect(calls).toBe(1);
      // A stream is priced the same way before its first attempt.
      const texts: string[] = [];
      for await (const event of chat.chatStream(request, { maxCostUsd: cap }))
        if (event.type === 'text-delta') texts.push(event.text);
      expect(texts).toEqual(['gpt-4o']);
      const refused = (async () => {
        for await (const _ of chat.chatStream(request, { maxCostUsd: byTokenizer / 2 })) {
          /* drain */
        }
      })();
      await expect(refused).rejects.toMatchObject({ code: ErrorCode.BudgetExceeded });
      expect(calls).toBe(2);
    } finally {
      await chat.close();
    }
  });
});
