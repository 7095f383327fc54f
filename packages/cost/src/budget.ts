import { ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import { z } from 'zod';

/** The dimensions a call is attributed by; a budget's `scope` picks which of them it keys on. */
export interface Attribution {
  tenant?: string | undefined;
  /** API key (or any caller id the service assigns). */
  key?: string | undefined;
  model?: string | undefined;
}
export type Dimension = 'tenant' | 'key' | 'model';
export const DIMENSIONS: readonly Dimension[] = ['tenant', 'key', 'model'];

export const budgetSchema = z
  .strictObject({
    /** Stable name; part of every ledger key, so renaming starts a fresh count. */
    id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
    /**
     * Dimensions that get a separate count: [] is one global count, ['tenant'] one per tenant,
     * ['tenant', 'model'] one per tenant and model. A call without a value for a dimension counts
     * under "-".
     */
    scope: z.array(z.enum(['tenant', 'key', 'model'])).default([]),
    /** Only calls with these values count against the budget (e.g. `{ model: 'gpt-4o' }`). */
    match: z
      .strictObject({
        tenant: z.string().optional(),
        key: z.string().optional(),
        model: z.string().optional(),
      })
      .optional(),
    window: z.enum(['minute', 'hour', 'day', 'month']),
    /**
     * calendar: UTC minute/hour/day/month that resets at its boundary. rolling: the last window
     * length, kept in `rollingBuckets` fixed sub-buckets (see README for the precision).
     * @default 'calendar'
     */
    kind: z.enum(['calendar', 'rolling']).default('calendar'),
    /** Sub-buckets of a rolling window. @default 60 */
    rollingBuckets: z.number().int().min(2).max(1440).default(60),
    /** Reject calls (BUDGET_EXCEEDED) that would take spent + reserved above this. */
    hardLimitUsd: z.number().nonnegative().optional(),
    /** Emit 'budget-soft-limit' when spent + reserved passes this; calls go on. */
    softLimitUsd: z.number().nonnegative().optional(),
  })
  .refine((budget) => budget.hardLimitUsd !== undefined || budget.softLimitUsd !== undefined, {
    message: 'a budget needs hardLimitUsd, softLimitUsd or both',
  });

// An interface, not a type alias, so that the API reference lists every field.
/** One budget as `createCostTracker({ budgets })` takes it. */
export interface BudgetInput extends z.input<typeof budgetSchema> {}
export type Budget = z.output<typeof budgetSchema>;

export function parseBudgets(budgets: readonly BudgetInput[]): Budget[] {
  const parsed = parseOptions(z.array(budgetSchema), budgets, 'budgets');
  const ids = new Set<string>();
  for (const budget of parsed) {
    if (ids.has(budget.id)) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `invalid budgets: duplicate budget id "${budget.id}"`,
      );
    }
    ids.add(budget.id);
  }
  return parsed;
}

/** Whether a call with this attribution counts against the budget. */
export function budgetApplies(budget: Budget, attribution: Attribution): boolean {
  const match = budget.match;
  if (!match) return true;
  return (
    (match.tenant === undefined || match.tenant === attribution.tenant) &&
    (match.key === undefined || match.key === attribution.key) &&
    (match.model === undefined || match.model === attribution.model)
  );
}

// Values are joined with characters that cannot be confused with the separators ("|", "=").
function escapeValue(value: string): string {
  return value.replace(/[%|=:{}\s]/g, (char) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The ledger line a call counts on for one budget: "<id>|tenant=acme|model=gpt-4o". */
export function lineKey(budget: Budget, attribution: Attribution): string {
  let key = budget.id;
  for (const dimension of budget.scope) key += `|${dimension}=${escapeValue(attribution[dimension] ?? '-')}`;
  return key;
}
