import { type CallOptions, ErrorCode, InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { API_KEY_CONTEXT } from './call-attribution.js';
import { withCost } from './chat-model-cost.js';
import { CostTracker } from './cost-tracker.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import { RedisBudgetStore } from './redis-budget-store.js';
import type { TokenUsage } from './token-cost.js';
import { costInterceptor } from './triton-cost-interceptor.js';

interface FakeRequest {
  model: string;
  messages: { role: 'user'; content: string }[];
  maxTokens?: number;
}
type FakeEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'finish' };

const usage: TokenUsage = {
  inputTokens: 1000,
  outputTokens: 100,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: undefined,
};

/** What @infergate/llm's adapters report when the provider stated no counts: every count unknown. */
const unknownUsage: TokenUsage = {
  inputTokens: undefined,
  outputTokens: undefined,
  cacheReadTokens: undefined,
  cacheWriteTokens: undefined,
  reasoningTokens: undefined,
};

/**
 * A fake ChatModel in the shape of @infergate/llm's. `usage: 'unknown'` answers as the adapters do
 * for a server that reports no usage (an OpenAI-compatible server without `include_usage`).
 */
function fakeModel(behaviour: { fail?: boolean; streamUsage?: boolean; usage?: 'unknown' } = {}) {
  const reported = behaviour.usage === 'unknown' ? unknownUsage : usage;
  return {
    provider: 'openai',
    defaultModel: 'gpt-4o-mini',
    calls: 0,
    async chat(request: FakeRequest, _options?: CallOptions) {
      this.calls++;
      if (behaviour.fail) throw new InfergateError(ErrorCode.Unavailable, 'down');
      return { id: '1', model: request.model, text: 'hi', usage: reported, provider: 'openai' };
    },
    async *chatStream(_request: FakeRequest, _options?: CallOptions): AsyncGenerator<FakeEvent> {
      this.calls++;
      yield { type: 'text-delta', text: 'he' };
      yield { type: 'text-delta', text: 'llo' };
      if (behaviour.streamUsage !== false) yield { type: 'usage', usage: reported };
      yield { type: 'finish' };
    },
  };
}

const request: FakeRequest = {
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hello' }],
  maxTokens: 200,
};
const costOf = (1000 * 0.15 + 100 * 0.6) / 1e6;

function tracker(limit = 1) {
  return new CostTracker({
    budgets: [{ id: 'tenant', scope: ['tenant'], window: 'day', hardLimitUsd: limit }],
  });
}

describe('cost integration options', () => {
  it('validate through parseOptions and keep the deprecated positional tracker working', async () => {
    const costs = tracker();
    expect(() => withCost(fakeModel(), {} as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/tracker/) }),
    );
    expect(() => costInterceptor({ tracker: costs, endpoint: 7 } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/endpoint/) }),
    );
    expect(() => new CostTracker({ reservationTtlMs: -1 })).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/reservationTtlMs/),
      }),
    );
    expect(() => new MemoryBudgetStore({ logSize: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => new RedisBudgetStore({} as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/redis/) }),
    );
    const settled: unknown[] = [];
    costs.on('settled', (entry) => settled.push(entry));
    await withCost(fakeModel(), costs).chat(request, { tenant: 'legacy' });
    expect(settled).toEqual([expect.objectContaining({ tenant: 'legacy' })]);
  });
});

describe('withCost', () => {
  it('reserves the estimate, settles with the response usage, attributed to tenant and key', async () => {
    const costs = tracker();
    const model = withCost(fakeModel(), { tracker: costs });
    expect(model.provider).toBe('openai');
    expect(model.defaultModel).toBe('gpt-4o-mini');
    const settled: unknown[] = [];
    costs.on('settled', (entry) => settled.push(entry));
    const response = await model.chat(request, {
      tenant: 'acme',
      context: new Map([[API_KEY_CONTEXT, 'key-1']]),
    });
    expect(response.text).toBe('hi');
    expect(settled).toEqual([
      expect.objectContaining({ tenant: 'acme', key: 'key-1', model: 'gpt-4o-mini', provider: 'openai' }),
    ]);
    const spend = await costs.spend('tenant', { tenant: 'acme' });
    expect(spend.spentUsd).toBeCloseTo(costOf, 9);
    expect(spend.reservedUsd).toBe(0);
  });

  it('rejects with BUDGET_EXCEEDED before calling the model', async () => {
    const inner = fakeModel();
    const model = withCost(inner, { tracker: tracker(0.00001) });
    await expect(model.chat(request, { tenant: 'acme' })).rejects.toMatchObject({
      code: ErrorCode.BudgetExceeded,
    });
    expect(inner.calls).toBe(0);
  });

  it('releases the reservation when the call fails', async () => {
    const costs = tracker();
    const model = withCost(fakeModel({ fail: true }), { tracker: costs });
    await expect(model.chat(request, { tenant: 'acme' })).rejects.toMatchObject({
      code: ErrorCode.Unavailable,
    });
    expect(await costs.spend('tenant', { tenant: 'acme' })).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
  });

  it('streams settle on the usage event', async () => {
    const costs = tracker();
    const model = withCost(fakeModel(), { tracker: costs });
    const types: string[] = [];
    for await (const event of model.chatStream(request, { tenant: 'acme' })) types.push(event.type);
    expect(types).toEqual(['text-delta', 'text-delta', 'usage', 'finish']);
    expect((await costs.spend('tenant', { tenant: 'acme' })).spentUsd).toBeCloseTo(costOf, 9);
  });

  it('a stream left before usage releases; one that ends without usage is charged its estimate', async () => {
    const costs = tracker();
    const model = withCost(fakeModel(), { tracker: costs });
    for await (const _event of model.chatStream(request, { tenant: 'acme' })) break;
    expect(await costs.spend('tenant', { tenant: 'acme' })).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
    const silent = withCost(fakeModel({ streamUsage: false }), { tracker: costs });
    for await (const _event of silent.chatStream(request, { tenant: 'acme' })) {
      // drain
    }
    const estimate = await costs.estimateChat(request, { provider: 'openai' });
    expect((await costs.spend('tenant', { tenant: 'acme' })).spentUsd).toBeCloseTo(
      estimate?.usd ?? Number.NaN,
      9,
    );
  });

  it('an answer whose usage states no counts is charged its estimate, streamed or not', async () => {
    const costs = tracker();
    const estimate = await costs.estimateChat(request, { provider: 'openai' });
    expect(estimate?.usd).toBeGreaterThan(0);
    const silent = withCost(fakeModel({ usage: 'unknown' }), { tracker: costs });
    await silent.chat(request, { tenant: 'unary' });
    expect((await costs.spend('tenant', { tenant: 'unary' })).spentUsd).toBeCloseTo(
      estimate?.usd ?? Number.NaN,
      9,
    );
    const types: string[] = [];
    for await (const event of silent.chatStream(request, { tenant: 'streamed' })) types.push(event.type);
    expect(types).toEqual(['text-delta', 'text-delta', 'usage', 'finish']);
    expect(await costs.spend('tenant', { tenant: 'streamed' })).toMatchObject({ reservedUsd: 0 });
    expect((await costs.spend('tenant', { tenant: 'streamed' })).spentUsd).toBeCloseTo(
      estimate?.usd ?? Number.NaN,
      9,
    );
  });
});
