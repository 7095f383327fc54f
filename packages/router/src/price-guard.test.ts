import { buildInferRequest, ErrorCode, InfergateError } from '@infergate/core';
import { createCostTracker, withCost } from '@infergate/cost';
import type { ChatModel, ChatRequest, ChatResponse } from '@infergate/llm';
import { describe, expect, it } from 'vitest';
import { chatAnswer, type FakeTarget, fakeTarget } from '../../../test/unit/router-fakes.js';
import { createChatRouter } from './chat-router.js';
import { createInferRouter } from './infer-router.js';

const request = buildInferRequest('m', [
  { name: 'IN', datatype: 'FP32', shape: [1], data: new Float32Array([1]) },
]);

const target = (name: string, down = false): FakeTarget => fakeTarget(name, { down });

/** A chat model of `model` (an Anthropic price-list name) that answers, or fails with UNAVAILABLE. */
function chatModel(model: string, down = false): ChatModel & { calls: number } {
  const self = {
    provider: 'anthropic',
    defaultModel: model,
    calls: 0,
    async chat(chat: ChatRequest): Promise<ChatResponse> {
      self.calls += 1;
      if (down)
        throw new InfergateError(ErrorCode.Unavailable, 'upstream connect error', { retryable: true });
      return chatAnswer(model, chat.model);
    },
    // biome-ignore lint/correctness/useYield: never streams
    async *chatStream() {
      throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
    },
  };
  return self;
}

const ask = (model: string): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  maxTokens: 50,
});

/**
 * A chat router without retries over a chat model of `firstModel` that fails, then one of
 * `secondModel`, both charged to one daily budget of `hardLimitUsd`.
 */
function chargedFallback(hardLimitUsd: number, firstModel: string, secondModel: string) {
  const tracker = createCostTracker({ budgets: [{ id: 'all', window: 'day', hardLimitUsd }] });
  const first = chatModel(firstModel, true);
  const second = chatModel(secondModel);
  const chat = createChatRouter({
    targets: [
      { name: 'first', model: withCost(first, { tracker }) },
      { name: 'second', model: withCost(second, { tracker }) },
    ],
    retry: { maxRetries: 0 },
  });
  return { tracker, first, second, chat };
}

describe('price-aware fallback guard', () => {
  it('never falls back to a target dearer than the call’s cap, nor to one of unknown price', async () => {
    const free = target('free', true);
    const paid = target('paid');
    const unknown = target('unknown');
    const routed = createInferRouter({
      targets: [
        { name: 'free', transport: free, cost: 0 },
        { name: 'paid', transport: paid, cost: 0.01 },
        { name: 'unknown', transport: unknown },
      ],
      retry: { maxRetries: 0 },
    });
    await expect(routed.infer(request, { maxCostUsd: 0.001 })).rejects.toMatchObject({
      code: ErrorCode.Unavailable,
    });
    expect([free.calls, paid.calls, unknown.calls]).toEqual([1, 0, 0]);
    // Without a cap the fallback chain goes on as before.
    expect((await routed.infer(request)).id).toBe('paid');
    // A cap no target fits fails at once, typed.
    const strict = createInferRouter({
      targets: [{ name: 'paid', transport: paid, cost: 0.01 }],
    });
    await expect(strict.infer(request, { maxCostUsd: 0.001 })).rejects.toMatchObject({
      code: ErrorCode.BudgetExceeded,
      details: { reason: 'cost cap', maxCostUsd: 0.001 },
    });
    await expect(strict.infer(request, { maxCostUsd: -1 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
    await Promise.all([routed.close(), strict.close()]);
  });

  it('prices chat fallbacks from the price list for the cap', async () => {
    const haiku = chatModel('claude-3-haiku', true);
    const opus = chatModel('claude-3-opus');
    const chat = createChatRouter({
      targets: [
        { name: 'haiku', model: haiku },
        { name: 'opus', model: opus },
      ],
      prices: {
        lookup: (query) =>
          ({ 'claude-3-haiku': { input: 0.25, output: 1.25 }, 'claude-3-opus': { input: 15, output: 75 } })[
            query.model
          ],
      },
      retry: { maxRetries: 0 },
    });
    // 50 output tokens: haiku ≈ $0.00006, opus ≈ $0.0038.
    await expect(chat.chat(ask('any'), { maxCostUsd: 0.001 })).rejects.toMatchObject({
      code: ErrorCode.Unavailable,
    });
    expect(opus.calls).toBe(0);
    await chat.close();
  });

  it('re-reserves for each fallback, and the failed attempt’s reservation is released', async () => {
    // One reservation of claude-3-5-sonnet with 50 output tokens (≈ $0.0008) fits under $0.001.
    const { tracker, first, second, chat } = chargedFallback(0.001, 'claude-3-5-sonnet', 'claude-3-5-sonnet');
    // The first attempt's reservation was released when it failed, or the second would not fit.
    expect((await chat.chat(ask('claude-3-5-sonnet'))).text).toBe('claude-3-5-sonnet');
    expect([first.calls, second.calls]).toEqual([1, 1]);
    expect((await tracker.report()).totalUsd).toBeCloseTo((10 * 3 + 10 * 15) / 1_000_000, 9);
    await chat.close();
  });

  it('does not move a call to a fallback the remaining budget cannot pay for: BUDGET_EXCEEDED, not charged', async () => {
    // $0.003 left: a haiku reservation fits, an opus one (50 output tokens ≈ $0.0038) does not.
    const {
      tracker,
      first: haiku,
      second: opus,
      chat,
    } = chargedFallback(0.003, 'claude-3-haiku', 'claude-3-opus');
    await expect(chat.chat(ask('any'))).rejects.toMatchObject({ code: ErrorCode.BudgetExceeded });
    expect([haiku.calls, opus.calls]).toEqual([1, 0]);
    expect((await tracker.report()).totalUsd).toBe(0);
    await chat.close();
  });
});
