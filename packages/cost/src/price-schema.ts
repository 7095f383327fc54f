import { parseOptions } from '@infergate/core';
import { z } from 'zod';

const usdPerMillion = z.number().finite().nonnegative();
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD');

/**
 * Prices above a context-length threshold. When a request's input (cached tokens included) is above
 * `aboveInputTokens`, every token of the request is charged at the tier's prices, as Anthropic's
 * long-context pricing does. Fields left out keep the base price.
 */
export const priceTierSchema = z.strictObject({
  aboveInputTokens: z.number().int().positive(),
  input: usdPerMillion.optional(),
  output: usdPerMillion.optional(),
  cacheRead: usdPerMillion.optional(),
  cacheWrite5m: usdPerMillion.optional(),
  cacheWrite1h: usdPerMillion.optional(),
  reasoning: usdPerMillion.optional(),
});

/** One price-list entry: USD per million tokens of each class, valid from `effectiveFrom`. */
export const priceEntrySchema = z.strictObject({
  /** Canonical model name, matched exactly (and with a dated-snapshot suffix stripped). */
  model: z.string().min(1),
  /** "openai", "anthropic", … (gen_ai.provider.name). */
  provider: z.string().min(1),
  /** Other exact names for the same model ("claude-3.5-sonnet"). */
  aliases: z.array(z.string().min(1)).optional(),
  /** UTC date from which this entry applies; absent: since always. */
  effectiveFrom: isoDate.optional(),
  input: usdPerMillion,
  output: usdPerMillion,
  /** Cached input read. Absent: charged as input. */
  cacheRead: usdPerMillion.optional(),
  /** Cache write with the default (5 minute) lifetime. Absent: charged as input. */
  cacheWrite5m: usdPerMillion.optional(),
  /** Cache write with a 1 hour lifetime (Anthropic). Absent: the 5 minute price. */
  cacheWrite1h: usdPerMillion.optional(),
  /** Reasoning (thinking) tokens, a part of output tokens. Absent: the output price. */
  reasoning: usdPerMillion.optional(),
  /** Ascending by threshold; the highest one exceeded applies. */
  tiers: z.array(priceTierSchema).optional(),
  /** Multipliers on the whole cost for a service tier (batch API, priority processing). */
  modifiers: z
    .strictObject({ batch: z.number().positive().optional(), priority: z.number().positive().optional() })
    .optional(),
  /** Where the figures come from (URL or name). */
  source: z.string().min(1),
  /** When the figures were checked against the source (YYYY-MM-DD). */
  date: isoDate,
});

export type PriceTier = z.infer<typeof priceTierSchema>;
export type PriceEntry = z.infer<typeof priceEntrySchema>;

/** Per-call service tier: batch and priority apply the entry's modifiers. */
export type ServiceTier = 'standard' | 'batch' | 'priority';

export const priceListSchema = z.array(priceEntrySchema).superRefine((entries, context) => {
  for (const [index, entry] of entries.entries()) {
    const thresholds = (entry.tiers ?? []).map((tier) => tier.aboveInputTokens);
    if (thresholds.some((value, i) => i > 0 && value <= (thresholds[i - 1] as number)))
      context.addIssue({
        code: 'custom',
        path: [index, 'tiers'],
        message: 'tiers must be sorted by aboveInputTokens, ascending and distinct',
      });
  }
});

/** Validates a price list (INVALID_ARGUMENT naming every bad field). */
export function parsePriceList(entries: unknown): PriceEntry[] {
  return parseOptions(priceListSchema, entries, 'price list');
}

/** Milliseconds since the epoch at which an entry starts to apply. */
export function effectiveFromMs(entry: PriceEntry): number {
  return entry.effectiveFrom === undefined
    ? Number.NEGATIVE_INFINITY
    : Date.parse(`${entry.effectiveFrom}T00:00:00Z`);
}
