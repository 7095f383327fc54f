import { createTritonClient } from '@infergate/core';
import { type CostTracker, createCostTracker, withCost } from '@infergate/cost';
import { createAnthropicChatModel, createOpenAIChatModel, createTritonChatModel } from '@infergate/llm';
import { type ChatRouter, createChatRouter } from '@infergate/router';

export interface LlmGatewayOptions {
  tritonUrl: string;
  openai: { baseURL?: string; apiKey?: string };
  anthropic: { baseURL?: string; apiKey?: string };
  /** Daily hard limit of every tenant, in USD. */
  dailyBudgetUsd: number;
  /** Tenants with a smaller daily limit. */
  tenantBudgetsUsd?: Readonly<Record<string, number>>;
}

export interface LlmGateway {
  chat: ChatRouter;
  costs: CostTracker;
  close(): Promise<void>;
}

/**
 * One ChatModel over three backends, tried in order: the self-hosted LLM on Triton (cheapest), then
 * OpenAI, then Anthropic. Each backend is wrapped with `withCost`, so every answered attempt is
 * charged to the tenant at that backend's price, and a failed attempt (released) costs nothing.
 */
export function createLlmGateway(options: LlmGatewayOptions): LlmGateway {
  const costs = createCostTracker({
    budgets: [
      { id: 'tenant-day', scope: ['tenant'], window: 'day', hardLimitUsd: options.dailyBudgetUsd },
      ...Object.entries(options.tenantBudgetsUsd ?? {}).map(([tenant, limit]) => ({
        id: `tenant-day-${tenant}`,
        match: { tenant },
        window: 'day' as const,
        hardLimitUsd: limit,
      })),
    ],
    // The self-hosted model's price per million tokens (what its GPUs cost you, amortized).
    prices: [
      {
        model: 'generate',
        provider: 'triton',
        input: 0.05,
        output: 0.1,
        source: 'example',
        date: '2025-01-01',
      },
    ],
  });
  const triton = createTritonClient({ url: options.tritonUrl, timeoutMs: 10_000 });
  const selfHosted = createTritonChatModel({
    client: triton,
    model: 'generate', // vLLM / TensorRT-LLM convention: text_input → text_output
    returnTokenCounts: true,
    returnFinishReason: true,
  });
  const openai = createOpenAIChatModel({ defaultModel: 'gpt-4o-mini', timeoutMs: 30_000, ...options.openai });
  const anthropic = createAnthropicChatModel({
    defaultModel: 'claude-haiku-4-5',
    timeoutMs: 30_000,
    ...options.anthropic,
  });
  const chat = createChatRouter({
    name: 'llm-gateway',
    targets: [
      { name: 'triton', model: withCost(selfHosted, { tracker: costs }) },
      { name: 'openai', model: withCost(openai, { tracker: costs }) },
      { name: 'anthropic', model: withCost(anthropic, { tracker: costs }) },
    ],
    attemptTimeoutMs: 15_000,
  });
  return {
    chat,
    costs,
    async close() {
      await chat.close();
      await triton.close();
      await costs.close();
    },
  };
}
