// @infergate/cost: see README.md. Public exports are listed here explicitly.

export type { BatchShare } from '@infergate/core';
/** Re-exported from @infergate/core, where the batcher reads it too. */
export { BATCH_SHARE_CONTEXT } from '@infergate/core';
export type { Attribution, Budget, BudgetInput, Dimension } from './budget.js';
export { budgetSchema, lineKey, parseBudgets } from './budget.js';
export type { Reservation, SettleDetails } from './budget-ledger.js';
export type {
  BudgetStore,
  DailySpend,
  LedgerLine,
  LineState,
  ReserveRequest,
  ReserveResult,
  SettleRequest,
  SpendEntry,
} from './budget-store.js';
export { NANO_PER_USD } from './budget-store.js';
export type { WindowSpan } from './budget-window.js';
export { windowAt } from './budget-window.js';
export { API_KEY_CONTEXT } from './call-attribution.js';
export type { CostableChatModel, WithCostOptions } from './chat-model-cost.js';
export { withCost } from './chat-model-cost.js';
export type { ComputeSample, StatisticsSource } from './compute-meter.js';
export { ComputeMeter } from './compute-meter.js';
export type { BudgetLimitEvent, CostEvents, PriceUnknownEvent } from './cost-events.js';
export { CostEventEmitter } from './cost-events.js';
export { COST_ATTRIBUTE, TENANT_ATTRIBUTE } from './cost-telemetry.js';
export type { CallAttribution, ChatEstimate, CostTrackerOptions } from './cost-tracker.js';
export { CostTracker, createCostTracker } from './cost-tracker.js';
export type { GpuCostInput, GpuPrice } from './gpu-cost.js';
export { GpuPriceTable, gpuPriceSchema, gpuShareUsd } from './gpu-cost.js';
export type { MemoryBudgetStoreOptions } from './memory-budget-store.js';
export { MemoryBudgetStore } from './memory-budget-store.js';
export type { PriceQuery, PriceResolver } from './price-catalog.js';
export { candidateNames, PriceCatalog } from './price-catalog.js';
export { ANTHROPIC_PRICES } from './price-data-anthropic.js';
export { OPENAI_PRICES } from './price-data-openai.js';
export type { PriceEntry, PriceTier, ServiceTier } from './price-schema.js';
export { parsePriceList, priceEntrySchema } from './price-schema.js';
export type { RedisBudgetStoreOptions, RedisLike } from './redis-budget-store.js';
export { RedisBudgetStore } from './redis-budget-store.js';
export type { ReportDimension, ReportQuery, SpendReport, SpendReportRow } from './spend-report.js';
export { reportToCsv, reportToJson } from './spend-report.js';
export type { CostBreakdown, TokenCounts, TokenUsage } from './token-cost.js';
export { priceTokens, priceUsage, tokenCounts } from './token-cost.js';
export type { EstimatableRequest, TokenEstimate } from './token-estimate.js';
export { estimateTokens, heuristicTokens, openAiEncoding, preloadTokenizers } from './token-estimate.js';
export type { CostInterceptorOptions } from './triton-cost-interceptor.js';
export { costInterceptor, requestRows } from './triton-cost-interceptor.js';
