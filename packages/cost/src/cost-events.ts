import type { Attribution } from './budget.js';
import type { SpendEntry } from './budget-store.js';

export interface PriceUnknownEvent {
  code: 'PRICE_UNKNOWN';
  /** tokens: no catalog entry for the model; gpu: no GPU-hour price for the endpoint/model. */
  kind: 'tokens' | 'gpu';
  model: string;
  provider: string | undefined;
  endpoint: string | undefined;
}

export interface BudgetLimitEvent {
  budgetId: string;
  /** The ledger line: "<budget id>|tenant=acme". */
  line: string;
  attribution: Attribution;
  limitUsd: number;
  spentUsd: number;
  reservedUsd: number;
  /** The amount the call asked to reserve. */
  estimateUsd: number;
  windowStart: number;
  resetAt: number;
}

export interface CostEvents {
  'price-unknown': PriceUnknownEvent;
  /** spent + reserved + estimate passed a soft limit (once per line and window per process). */
  'budget-soft-limit': BudgetLimitEvent;
  /** A hard limit rejected a call (the caller also gets BUDGET_EXCEEDED). */
  'budget-exceeded': BudgetLimitEvent;
  /** A call's spend was written to the ledger. */
  settled: SpendEntry;
  /**
   * The ledger failed while settling or releasing after the call itself succeeded or failed; the
   * integrations report it here instead of failing (or masking) the caller's result.
   */
  'ledger-error': { operation: 'settle' | 'release'; reservationId: string; error: unknown };
}

type Listener<T> = (event: T) => void;

/** A small typed emitter (`on`/`off`); a throwing listener never breaks the call that emitted. */
export class CostEventEmitter {
  readonly #listeners = new Map<keyof CostEvents, Set<Listener<never>>>();

  on<K extends keyof CostEvents>(name: K, listener: Listener<CostEvents[K]>): this {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as Listener<never>);
    return this;
  }

  off<K extends keyof CostEvents>(name: K, listener: Listener<CostEvents[K]>): this {
    this.#listeners.get(name)?.delete(listener as Listener<never>);
    return this;
  }

  /** Whether anyone listens (lets hot paths skip building events). */
  listens(name: keyof CostEvents): boolean {
    return (this.#listeners.get(name)?.size ?? 0) > 0;
  }

  /** For the integrations of this package; not for application code. */
  emit<K extends keyof CostEvents>(name: K, event: CostEvents[K]): void {
    const set = this.#listeners.get(name);
    if (!set) return;
    for (const listener of set) {
      try {
        (listener as Listener<CostEvents[K]>)(event);
      } catch {
        // Listeners observe; they must not change the outcome of the call.
      }
    }
  }
}
