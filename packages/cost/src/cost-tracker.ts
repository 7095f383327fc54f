import { parseOptions } from '@infergate/core';
import { z } from 'zod';
import type { Attribution, BudgetInput } from './budget.js';
import { parseBudgets } from './budget.js';
import { BudgetLedger, type Reservation, type SettleDetails } from './budget-ledger.js';
import type { BudgetStore, SpendEntry } from './budget-store.js';
import { CostEventEmitter } from './cost-events.js';
import { CostMetrics } from './cost-metrics.js';
import { recordCostOnSpan } from './cost-telemetry.js';
import { type GpuCostInput, type GpuPrice, GpuPriceTable, gpuShareUsd } from './gpu-cost.js';
import { functionSchema } from './internal/tracker-schema.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import { PriceCatalog, type PriceResolver } from './price-catalog.js';
import type { PriceEntry, ServiceTier } from './price-schema.js';
import { buildReport, type ReportQuery, type SpendReport } from './spend-report.js';
import { type CostBreakdown, priceTokens, priceUsage, type TokenUsage } from './token-cost.js';
import { type EstimatableRequest, estimateTokens } from './token-estimate.js';

export interface CostTrackerOptions {
  /** Where budgets are counted. @default new MemoryBudgetStore() */
  store?: BudgetStore;
  budgets?: readonly BudgetInput[];
  /** Extra or overriding price entries (validated). */
  prices?: readonly PriceEntry[];
  /** Consulted before the catalog for every lookup. */
  resolver?: PriceResolver;
  /** Include the built-in OpenAI and Anthropic prices. @default true */
  builtInPrices?: boolean;
  gpuPrices?: readonly GpuPrice[];
  /** How long a reservation holds budget if never settled or released. @default 120000 */
  reservationTtlMs?: number;
  /** Output tokens assumed by estimates when a request sets no maxTokens. @default 1024 */
  defaultMaxOutputTokens?: number;
  /** Milliseconds since the epoch; injectable for tests. @default Date.now */
  clock?: () => number;
  /** Span attributes and metrics through @opentelemetry/api (the switch core and llm call `tracing`). @default true */
  tracing?: boolean;
  /** @deprecated Use `tracing`; removed in 1.0. */
  telemetry?: boolean;
  /**
   * Put the tenant on cost metrics (`infergate.tenant`, and per-line budget gauges). Every tenant
   * becomes its own time series in the metrics backend: leave it off unless tenants are few and
   * known. Spans carry the tenant either way. @default false
   */
  metricsByTenant?: boolean;
}

// Checked once per tracker; the prices and budgets inside are checked by their own schemas.
const trackerOptionsSchema = z.strictObject({
  store: z
    .custom<BudgetStore>(
      (value) =>
        typeof value === 'object' && value !== null && typeof (value as BudgetStore).reserve === 'function',
      'store must be a BudgetStore',
    )
    .optional(),
  budgets: z.array(z.unknown()).optional(),
  prices: z.array(z.unknown()).optional(),
  resolver: functionSchema('resolver').optional(),
  builtInPrices: z.boolean().optional(),
  gpuPrices: z.array(z.unknown()).optional(),
  reservationTtlMs: z.number().int().positive().optional(),
  defaultMaxOutputTokens: z.number().int().positive().optional(),
  clock: functionSchema('clock').optional(),
  tracing: z.boolean().optional(),
  telemetry: z.boolean().optional(),
  metricsByTenant: z.boolean().optional(),
});

/** Per-call options of reserve/settle: the caller's signal stops the wait for the store. */
export interface LedgerCallOptions {
  signal?: AbortSignal | undefined;
}

/** A call's identity for budgets and reports. */
export interface CallAttribution extends Attribution {
  provider?: string | undefined;
}

export interface ChatEstimate {
  usd: number;
  inputTokens: number;
  outputTokens: number;
  /** True when the input was counted by the character heuristic. */
  estimated: boolean;
  breakdown: CostBreakdown;
}

/**
 * Prices, budgets and the ledger in one object: what the integrations (`withCost`,
 * `costInterceptor`) and the router hooks call. Events: 'price-unknown', 'budget-soft-limit',
 * 'budget-exceeded', 'settled'.
 */
export class CostTracker extends CostEventEmitter {
  readonly prices: PriceCatalog;
  readonly gpuPrices: GpuPriceTable;
  readonly store: BudgetStore;
  readonly #ledger: BudgetLedger;
  readonly #clock: () => number;
  readonly #defaultMaxOutputTokens: number;
  readonly #telemetry: boolean;
  readonly #metrics: CostMetrics | undefined;

  constructor(input: CostTrackerOptions = {}) {
    super();
    parseOptions(trackerOptionsSchema, input, 'cost tracker options');
    const options = input;
    this.#clock = options.clock ?? Date.now;
    this.#defaultMaxOutputTokens = options.defaultMaxOutputTokens ?? 1024;
    this.#telemetry = options.tracing ?? options.telemetry ?? true;
    this.#metrics = this.#telemetry ? new CostMetrics(options.metricsByTenant ?? false) : undefined;
    this.prices = new PriceCatalog({
      builtIn: options.builtInPrices ?? true,
      ...(options.prices ? { prices: options.prices } : {}),
      ...(options.resolver ? { resolver: options.resolver } : {}),
    });
    this.gpuPrices = new GpuPriceTable(options.gpuPrices);
    this.store = options.store ?? new MemoryBudgetStore();
    this.#ledger = new BudgetLedger({
      store: this.store,
      budgets: parseBudgets(options.budgets ?? []),
      clock: this.#clock,
      ttlMs: options.reservationTtlMs ?? 120_000,
      metrics: this.#metrics,
      hooks: {
        softLimit: (event) => this.emit('budget-soft-limit', event),
        exceeded: (event) => this.emit('budget-exceeded', event),
        settled: (entry) => this.#settled(entry),
      },
    });
  }

  /** Adds or overrides price entries. */
  registerPrices(entries: readonly PriceEntry[]): void {
    this.prices.register(entries);
  }

  registerGpuPrices(prices: readonly GpuPrice[]): void {
    this.gpuPrices.register(prices);
  }

  /** The price entry in force for a model, without emitting anything. */
  priceOf(
    model: string,
    options: { provider?: string | undefined; at?: number } = {},
  ): PriceEntry | undefined {
    return this.prices.lookup({
      model,
      at: options.at ?? this.#clock(),
      ...(options.provider === undefined ? {} : { provider: options.provider }),
    });
  }

  /** USD of a call's usage; null (and a 'price-unknown' event) when the model has no price. */
  costOfUsage(input: {
    model: string;
    provider?: string | undefined;
    usage: TokenUsage;
    serviceTier?: ServiceTier;
    at?: number;
  }): CostBreakdown | null {
    const entry = this.#lookupOrReport(input.model, input.provider, input.at);
    return entry
      ? priceUsage(entry, input.usage, input.serviceTier ? { serviceTier: input.serviceTier } : {})
      : null;
  }

  /**
   * Pre-call estimate of a chat request: input tokens counted (gpt-tokenizer for OpenAI models,
   * padded heuristic otherwise) and output = maxTokens or the default cap, at uncached input price.
   */
  async estimateChat(
    request: EstimatableRequest,
    options: { provider?: string | undefined; serviceTier?: ServiceTier } = {},
  ): Promise<ChatEstimate | null> {
    const entry = this.#lookupOrReport(request.model, options.provider);
    if (!entry) return null;
    const tokens = await estimateTokens(request, { defaultMaxOutputTokens: this.#defaultMaxOutputTokens });
    const breakdown = priceTokens(
      entry,
      {
        uncachedInput: tokens.inputTokens,
        cacheRead: 0,
        cacheWrite5m: 0,
        cacheWrite1h: 0,
        output: tokens.outputTokens,
        reasoning: 0,
        totalInput: tokens.inputTokens,
      },
      { estimated: tokens.estimated, ...(options.serviceTier ? { serviceTier: options.serviceTier } : {}) },
    );
    return {
      usd: breakdown.usd,
      inputTokens: tokens.inputTokens,
      outputTokens: tokens.outputTokens,
      estimated: tokens.estimated,
      breakdown,
    };
  }

  /** USD of a call's share of GPU time; null (and 'price-unknown') without a GPU-hour price. */
  gpuCost(input: GpuCostInput): number | null {
    const price = this.gpuPrices.lookup(input.model, input.endpoint);
    if (!price) {
      this.emit('price-unknown', {
        code: 'PRICE_UNKNOWN',
        kind: 'gpu',
        model: input.model,
        provider: 'triton',
        endpoint: input.endpoint,
      });
      return null;
    }
    return gpuShareUsd(price, input);
  }

  /**
   * Holds `estimateUsd` on every budget that applies, atomically, or throws BUDGET_EXCEEDED (with
   * retryAfterMs until the window resets). Settle or release the reservation when the call ends.
   */
  reserve(
    request: CallAttribution & { estimateUsd: number; ttlMs?: number; signal?: AbortSignal | undefined },
  ): Promise<Reservation> {
    // The caller's request is read as it is: the ledger takes what it needs of it.
    return this.#ledger.reserve({ tenant: request.tenant, key: request.key, model: request.model }, request);
  }

  /** Records the actual cost and frees the reservation (idempotent). */
  settle(
    reservation: Reservation,
    details: SettleDetails,
    options?: LedgerCallOptions,
  ): Promise<SpendEntry | undefined> {
    return this.#ledger.settle(reservation, details, options?.signal);
  }

  /** Prices the usage and settles with it; returns the breakdown (null: no price, recorded as unpriced). */
  async settleUsage(
    reservation: Reservation,
    usage: TokenUsage,
    options: { model?: string; serviceTier?: ServiceTier } & LedgerCallOptions = {},
  ): Promise<CostBreakdown | null> {
    const model = options.model ?? reservation.attribution.model ?? '';
    const breakdown = this.costOfUsage({
      model,
      provider: reservation.provider,
      usage,
      ...(options.serviceTier ? { serviceTier: options.serviceTier } : {}),
    });
    await this.#ledger.settle(
      reservation,
      {
        costUsd: breakdown?.usd ?? null,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        model,
      },
      options.signal,
    );
    return breakdown;
  }

  /** Frees the reservation without spend (failed or aborted call; idempotent). */
  release(reservation: Reservation): Promise<void> {
    return this.#ledger.release(reservation);
  }

  /** Charges a call that was not reserved (e.g. priced after the fact). */
  async record(call: CallAttribution & SettleDetails): Promise<SpendEntry | undefined> {
    const reservation = this.#ledger.detached(
      { tenant: call.tenant, key: call.key, model: call.model },
      { provider: call.provider, estimateUsd: 0 },
    );
    return this.#ledger.settle(reservation, call);
  }

  /** Spent and reserved in the current window of one budget line. */
  spend(budgetId: string, attribution: Attribution = {}) {
    return this.#ledger.inspect(budgetId, attribution);
  }

  /** Spend by tenant/model/day (or any grouping) from the ledger's daily aggregates. */
  async report(query: ReportQuery = {}): Promise<SpendReport> {
    return buildReport(this.store, query, this.#clock());
  }

  async close(): Promise<void> {
    this.#metrics?.close();
    await this.store.close?.();
  }

  #lookupOrReport(model: string, provider: string | undefined, at?: number): PriceEntry | undefined {
    const entry = this.priceOf(model, { provider, at: at ?? this.#clock() });
    if (!entry)
      this.emit('price-unknown', {
        code: 'PRICE_UNKNOWN',
        kind: 'tokens',
        model,
        provider,
        endpoint: undefined,
      });
    return entry;
  }

  #settled(entry: SpendEntry): void {
    if (this.#metrics !== undefined) {
      recordCostOnSpan(entry.costUsd, entry.tenant);
      if (entry.costUsd !== null)
        this.#metrics.spent(entry.costUsd, entry.tenant, entry.model, entry.provider);
    }
    this.emit('settled', entry);
  }
}

/** Same as `new CostTracker(options)`. */
export function createCostTracker(options: CostTrackerOptions = {}): CostTracker {
  return new CostTracker(options);
}
