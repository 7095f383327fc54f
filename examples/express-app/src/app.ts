import { createTritonClient, InfergateError } from '@infergate/core';
import { costInterceptor, createCostTracker, MemoryBudgetStore, withCost } from '@infergate/cost';
import { chatHandler, errorHandler, type Gateway, infergate, kserveInferHandler } from '@infergate/express';
import { createOpenAIChatModel } from '@infergate/llm';
import express, { type Express } from 'express';

export interface AppOptions {
  tritonUrl: string;
  openaiBaseUrl?: string;
  openaiApiKey?: string;
  /** API key → tenant. */
  apiKeys: Readonly<Record<string, string>>;
  /** Daily hard limit per tenant, in USD (tenants not listed get `defaultDailyUsd`). */
  dailyBudgetUsd: Readonly<Record<string, number>>;
  /** @default 1 */
  defaultDailyUsd?: number;
}

/**
 * The app: `POST /v2/models/:model/infer` (KServe v2 REST JSON → Triton gRPC), `POST /v1/chat`
 * (JSON, or Server-Sent Events with `stream: true`), `GET /v1/spend` (this tenant's spend report).
 * Every route needs an API key (`Authorization: Bearer <key>` or `x-api-key`).
 */
export function createApp(options: AppOptions): { app: Express; close(): Promise<void> } {
  // One budget per tenant and day; each tenant's limit is its own budget line matched on the tenant.
  const costs = createCostTracker({
    store: new MemoryBudgetStore(),
    budgets: [
      ...Object.entries(options.dailyBudgetUsd).map(([tenant, limit]) => ({
        id: `daily-${tenant}`,
        scope: ['tenant' as const],
        match: { tenant },
        window: 'day' as const,
        hardLimitUsd: limit,
      })),
      {
        id: 'daily-default',
        scope: ['tenant' as const],
        window: 'day' as const,
        hardLimitUsd: options.defaultDailyUsd ?? 1,
      },
    ],
    // Self-hosted models cost GPU time: a GPU-hour price per model.
    gpuPrices: [{ model: 'add_sub', usdPerGpuHour: 2.5 }],
  });
  const triton = createTritonClient({
    url: options.tritonUrl,
    timeoutMs: 10_000,
    interceptors: [costInterceptor({ tracker: costs, endpoint: options.tritonUrl })],
  });
  const chat = withCost(
    createOpenAIChatModel({
      defaultModel: 'gpt-4o-mini',
      timeoutMs: 30_000,
      ...(options.openaiBaseUrl === undefined ? {} : { baseURL: options.openaiBaseUrl }),
      ...(options.openaiApiKey === undefined ? {} : { apiKey: options.openaiApiKey }),
    }),
    { tracker: costs },
  );

  const app = express();
  app.use(express.json({ limit: '8mb' }));
  app.use(
    infergate<Gateway>({
      gateway: { triton, chat },
      tenant: { apiKeys: options.apiKeys },
      defaultTenant: undefined, // no key → 401
      // Refuse up front a tenant whose day is already spent (every route, Triton included); chat
      // calls are also reserved and settled per call by withCost.
      budget: async ({ tenant }) => {
        const id = tenant in options.dailyBudgetUsd ? `daily-${tenant}` : 'daily-default';
        const line = await costs.spend(id, { tenant });
        if (line.hardLimitUsd !== undefined && line.spentUsd >= line.hardLimitUsd) {
          throw new InfergateError('BUDGET_EXCEEDED', `tenant ${tenant} has spent its daily budget`, {
            retryAfterMs: Math.max(0, line.resetAt - Date.now()),
          });
        }
      },
    }),
  );
  app.post('/v2/models/:model/infer', kserveInferHandler());
  app.post('/v2/models/:model/versions/:version/infer', kserveInferHandler());
  app.post('/v1/chat', chatHandler({ defaultModel: 'gpt-4o-mini' }));
  app.get('/v1/spend', async (request, response) => {
    const tenant = (request as { infergate?: { tenant: string } }).infergate?.tenant ?? '';
    response.json(await costs.report({ groupBy: ['tenant', 'model'], tenant }));
  });
  app.use(errorHandler());

  return {
    app,
    async close() {
      await triton.close();
      await costs.close();
    },
  };
}
