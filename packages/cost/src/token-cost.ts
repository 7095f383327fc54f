import type { PriceEntry, PriceTier, ServiceTier } from './price-schema.js';

/**
 * Token usage as @infergate/llm's `ChatUsage` gives it (structurally the same type, so this package
 * needs no dependency on llm). Unknown counts are undefined, never 0; `inputTokens` includes cache
 * reads and writes.
 */
export interface TokenUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  reasoningTokens?: number | undefined;
  /** The provider's own usage object; Anthropic's splits cache writes by lifetime. */
  raw?: unknown;
}

/** Tokens by the class they are charged at; every count is known (0 where absent). */
export interface TokenCounts {
  /** Input tokens charged at the input price: input minus cache reads and writes. */
  uncachedInput: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  /** Output tokens other than reasoning. */
  output: number;
  reasoning: number;
  /** All input tokens, cached included: what context-length tiers compare against. */
  totalInput: number;
}

export interface CostBreakdown {
  usd: number;
  /** USD per token class (after tier and service-tier modifiers). */
  parts: { input: number; cacheRead: number; cacheWrite: number; output: number; reasoning: number };
  tokens: TokenCounts;
  /** The tier threshold that applied, if any. */
  tierAboveInputTokens: number | undefined;
  serviceTier: ServiceTier;
  /** True when some counts were unknown (treated as 0) or came from an estimate. */
  estimated: boolean;
  price: { model: string; provider: string; effectiveFrom: string | undefined; source: string; date: string };
}

function count(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Anthropic's raw usage carries `cache_creation.ephemeral_1h_input_tokens`; read it when present. */
function oneHourCacheWrites(raw: unknown): number {
  if (typeof raw !== 'object' || raw === null) return 0;
  const creation = (raw as { cache_creation?: unknown }).cache_creation;
  if (typeof creation !== 'object' || creation === null) return 0;
  return count((creation as { ephemeral_1h_input_tokens?: number }).ephemeral_1h_input_tokens);
}

/**
 * Splits normalized usage into charged classes. `inputTokens` includes cached tokens, so the
 * uncached part is input − cacheRead − cacheWrite. If an adapter reports input *without* cached
 * tokens (input < reads + writes), input is taken as the uncached part rather than going negative.
 */
export function tokenCounts(usage: TokenUsage): { tokens: TokenCounts; complete: boolean } {
  const input = count(usage.inputTokens);
  const cacheRead = count(usage.cacheReadTokens);
  const cacheWrite = count(usage.cacheWriteTokens);
  const cacheWrite1h = Math.min(cacheWrite, oneHourCacheWrites(usage.raw));
  const output = count(usage.outputTokens);
  const reasoning = Math.min(output, count(usage.reasoningTokens));
  const includesCached = input >= cacheRead + cacheWrite;
  const uncachedInput = includesCached ? input - cacheRead - cacheWrite : input;
  return {
    tokens: {
      uncachedInput,
      cacheRead,
      cacheWrite5m: cacheWrite - cacheWrite1h,
      cacheWrite1h,
      output: output - reasoning,
      reasoning,
      totalInput: includesCached ? input : input + cacheRead + cacheWrite,
    },
    complete: usage.inputTokens !== undefined && usage.outputTokens !== undefined,
  };
}

function tierFor(entry: PriceEntry, totalInput: number): PriceTier | undefined {
  let chosen: PriceTier | undefined;
  for (const tier of entry.tiers ?? []) if (totalInput > tier.aboveInputTokens) chosen = tier;
  return chosen;
}

/** USD for the given token counts under one price entry. */
export function priceTokens(
  entry: PriceEntry,
  tokens: TokenCounts,
  options: { serviceTier?: ServiceTier; estimated?: boolean } = {},
): CostBreakdown {
  const tier = tierFor(entry, tokens.totalInput);
  const serviceTier = options.serviceTier ?? 'standard';
  const input = tier?.input ?? entry.input;
  const output = tier?.output ?? entry.output;
  const cacheRead = tier?.cacheRead ?? entry.cacheRead ?? input;
  const cacheWrite5m = tier?.cacheWrite5m ?? entry.cacheWrite5m ?? input;
  const cacheWrite1h = tier?.cacheWrite1h ?? entry.cacheWrite1h ?? cacheWrite5m;
  const reasoning = tier?.reasoning ?? entry.reasoning ?? output;
  const multiplier =
    serviceTier === 'batch'
      ? (entry.modifiers?.batch ?? 1)
      : serviceTier === 'priority'
        ? (entry.modifiers?.priority ?? 1)
        : 1;
  const scale = multiplier / 1_000_000;
  const parts = {
    input: tokens.uncachedInput * input * scale,
    cacheRead: tokens.cacheRead * cacheRead * scale,
    cacheWrite: (tokens.cacheWrite5m * cacheWrite5m + tokens.cacheWrite1h * cacheWrite1h) * scale,
    output: tokens.output * output * scale,
    reasoning: tokens.reasoning * reasoning * scale,
  };
  return {
    usd: parts.input + parts.cacheRead + parts.cacheWrite + parts.output + parts.reasoning,
    parts,
    tokens,
    tierAboveInputTokens: tier?.aboveInputTokens,
    serviceTier,
    estimated: options.estimated ?? false,
    price: {
      model: entry.model,
      provider: entry.provider,
      effectiveFrom: entry.effectiveFrom,
      source: entry.source,
      date: entry.date,
    },
  };
}

/** USD for a call's usage under one price entry (unknown counts are 0 and flag `estimated`). */
export function priceUsage(
  entry: PriceEntry,
  usage: TokenUsage,
  options: { serviceTier?: ServiceTier } = {},
): CostBreakdown {
  const { tokens, complete } = tokenCounts(usage);
  return priceTokens(entry, tokens, { ...options, estimated: !complete });
}
