import { ErrorCode, InfergateError } from '@infergate/core';
import { type Attribution, type Budget, budgetApplies, lineKey } from './budget.js';
import {
  type BudgetStore,
  type LineState,
  NANO_PER_USD,
  type ReserveRequest,
  type ReserveResult,
  type SpendEntry,
  toNano,
  toNanoCeil,
} from './budget-store.js';
import { windowAt } from './budget-window.js';
import type { BudgetLimitEvent } from './cost-events.js';
import type { CostMetrics } from './cost-metrics.js';
import { abortable, throwIfAborted } from './internal/abortable.js';
import { formatUsd } from './internal/format-usd.js';
import { TupleMap } from './internal/tuple-map.js';
import { type Applied, type Applying, LedgerReservation, nextReservationId } from './ledger-reservation.js';
import { MemoryBudgetStore, releaseHeld, reserveHeld, settleHeld } from './memory-budget-store.js';

/** Budget held for one call between `reserve` and `settle`/`release`. */
export interface Reservation {
  readonly id: string;
  readonly estimateUsd: number;
  readonly attribution: Readonly<Attribution>;
  readonly provider: string | undefined;
  readonly createdAt: number;
  /** After this the ledger no longer holds the amount; settling later still records the spend. */
  readonly expiresAt: number;
}

export interface SettleDetails {
  /** null: the call had no price; nothing is added to budgets, the report counts it as unpriced. */
  costUsd: number | null;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  /** The model that actually answered, when it differs from the reserved one (reports only). */
  model?: string | undefined;
}

/** What a reserve asks for, besides the attribution. */
export interface ReserveInput {
  provider?: string | undefined;
  estimateUsd: number;
  ttlMs?: number | undefined;
  /** Stops the wait for the store (CANCELLED / DEADLINE_EXCEEDED); a late hold is released. */
  signal?: AbortSignal | undefined;
}

export interface LedgerHooks {
  softLimit(event: BudgetLimitEvent): void;
  exceeded(event: BudgetLimitEvent): void;
  settled(entry: SpendEntry): void;
}

/** The reservation protocol over a store: reserve → settle | release, with TTL expiry. */
export class BudgetLedger {
  readonly #store: BudgetStore;
  readonly #budgets: readonly Budget[];
  readonly #clock: () => number;
  readonly #ttlMs: number;
  readonly #hooks: LedgerHooks;
  readonly #metrics: CostMetrics | undefined;
  /** "<line>@<window start>" already reported as past its soft limit by this process. */
  readonly #softReported = new Set<string>();
  /** Per attribution (tenant, key, model): rebuilt only when a window moves on. */
  readonly #applying = new TupleMap<Applying>(10_000);
  /** The default store, called through its record-keeping entry points (no promise, no id lookup). */
  readonly #memory: MemoryBudgetStore | undefined;

  constructor(options: {
    store: BudgetStore;
    budgets: readonly Budget[];
    clock: () => number;
    ttlMs: number;
    hooks: LedgerHooks;
    metrics?: CostMetrics | undefined;
  }) {
    this.#store = options.store;
    this.#budgets = options.budgets;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
    this.#hooks = options.hooks;
    this.#metrics = options.metrics;
    // Only the class itself: a subclass may override reserve/settle/release, and its calls must
    // reach those overrides through the store interface.
    this.#memory =
      Object.getPrototypeOf(options.store) === MemoryBudgetStore.prototype
        ? (options.store as MemoryBudgetStore)
        : undefined;
  }

  get budgets(): readonly Budget[] {
    return this.#budgets;
  }

  /**
   * Holds the estimate on every line that applies, or rejects with BUDGET_EXCEEDED. Not an async
   * function: with the in-memory store nothing is awaited, and an async function's frame (its
   * promise and a copy of every local) was a third of what a reserve allocated. Errors still come
   * back as rejections.
   */
  reserve(attribution: Attribution, request: ReserveInput): Promise<Reservation> {
    try {
      if (!(request.estimateUsd >= 0)) {
        throw new InfergateError(
          ErrorCode.InvalidArgument,
          `estimateUsd must be a number ≥ 0, got ${request.estimateUsd}`,
        );
      }
      const now = this.#clock();
      const reservation = this.detached(attribution, request, now);
      const applying = this.#lines(attribution, now);
      const applied = applying.applied;
      if (applied.length === 0) return Promise.resolve(reservation);
      const amountNano = toNanoCeil(request.estimateUsd);
      const signal = request.signal;
      throwIfAborted(signal);
      // One object literal of a fixed shape (signal may be undefined): a conditional spread here
      // built two objects per call and gave the store two shapes to handle.
      const storeRequest = {
        id: reservation.id,
        amountNano,
        lines: applying.lines,
        now,
        expiresAt: reservation.expiresAt,
        signal,
      };
      if (this.#memory === undefined)
        return this.#reserveIn(this.#store, reservation, applying, storeRequest);
      const outcome = reserveHeld(this.#memory, storeRequest);
      if ('ok' in outcome) this.#reject(applied, outcome, reservation, now);
      LedgerReservation.keep(reservation, applying, outcome);
      return Promise.resolve(this.#held(reservation, applied, outcome.states, amountNano));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Reserve in a store other than the in-memory one, which may answer with a promise. */
  async #reserveIn(
    store: BudgetStore,
    reservation: Reservation,
    applying: Applying,
    storeRequest: ReserveRequest,
  ): Promise<Reservation> {
    LedgerReservation.keep(reservation, applying, undefined);
    const pending = store.reserve(storeRequest);
    // A promise is raced here, so a store that ignores the signal cannot hold the caller past
    // its deadline; a store that answers synchronously needs no race and no closure.
    const result =
      pending instanceof Promise
        ? await raceReserve(pending, storeRequest.signal, () => store.release(reservation.id, this.#clock()))
        : pending;
    if (!result.ok) this.#reject(applying.applied, result, reservation, storeRequest.now);
    return this.#held(reservation, applying.applied, result.lines, storeRequest.amountNano);
  }

  /** A reservation the store accepted: soft limits passed and metrics, then the caller gets it. */
  #held(
    reservation: Reservation,
    applied: readonly Applied[],
    states: readonly LineState[],
    amountNano: number,
  ): Reservation {
    for (let i = 0; i < applied.length; i++) {
      const item = applied[i] as Applied;
      const soft = item.budget.softLimitUsd;
      const state = states[i] as LineState;
      if (soft === undefined || state.spentNano + state.reservedNano + amountNano <= soft * NANO_PER_USD)
        continue;
      const memo = `${item.line.key}@${item.start}`;
      if (this.#softReported.has(memo)) continue;
      if (this.#softReported.size > 10_000) this.#softReported.clear();
      this.#softReported.add(memo);
      this.#hooks.softLimit(this.#event(item, state, reservation, soft));
    }
    const metrics = this.#metrics;
    if (metrics !== undefined) {
      metrics.held(reservation);
      for (let i = 0; i < applied.length; i++) {
        const item = applied[i] as Applied;
        const limit = item.budget.hardLimitUsd;
        if (limit === undefined) continue;
        const state = states[i] as LineState;
        metrics.room(
          item.budget.id,
          item.line.key,
          limit - (state.spentNano + state.reservedNano + amountNano) / NANO_PER_USD,
        );
      }
    }
    return reservation;
  }

  /** A reservation that holds nothing: for spend recorded after the fact (never rejected). */
  detached(attribution: Attribution, request: ReserveInput, now = this.#clock()): Reservation {
    return new LedgerReservation(
      nextReservationId(),
      request.estimateUsd,
      attribution,
      request.provider,
      now,
      now + (request.ttlMs ?? this.#ttlMs),
    );
  }

  /** Records the spend and frees the hold (not an async function either; see reserve). */
  settle(
    reservation: Reservation,
    details: SettleDetails,
    signal?: AbortSignal,
  ): Promise<SpendEntry | undefined> {
    try {
      if (!LedgerReservation.finish(reservation)) return Promise.resolve(undefined);
      const now = this.#clock();
      const costUsd = details.costUsd === null ? null : Math.max(0, details.costUsd);
      const entry: SpendEntry = {
        at: now,
        tenant: reservation.attribution.tenant,
        key: reservation.attribution.key,
        model: details.model ?? reservation.attribution.model,
        provider: reservation.provider,
        costUsd,
        inputTokens: details.inputTokens,
        outputTokens: details.outputTokens,
        reservationId: reservation.id,
      };
      const storeRequest = {
        id: reservation.id,
        actualNano: costUsd === null ? null : toNano(costUsd),
        lines: LedgerReservation.linesAt(reservation, now) ?? this.#lines(reservation.attribution, now).lines,
        now,
        entry,
        signal,
      };
      if (this.#memory !== undefined)
        settleHeld(this.#memory, LedgerReservation.held(reservation), storeRequest);
      else {
        const pending = this.#store.settle(storeRequest);
        if (pending instanceof Promise) {
          this.#metrics?.finished(reservation);
          return this.#settled(abortable(pending, signal), entry);
        }
      }
      this.#metrics?.finished(reservation);
      this.#hooks.settled(entry);
      return Promise.resolve(entry);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #settled(pending: Promise<void> | void, entry: SpendEntry): Promise<SpendEntry> {
    await pending;
    this.#hooks.settled(entry);
    return entry;
  }

  async release(reservation: Reservation): Promise<void> {
    if (!LedgerReservation.finish(reservation)) return;
    this.#metrics?.finished(reservation);
    if (this.#memory !== undefined) {
      releaseHeld(this.#memory, LedgerReservation.held(reservation), reservation.id, this.#clock());
      return;
    }
    const pending = this.#store.release(reservation.id, this.#clock());
    if (pending instanceof Promise) await pending;
  }

  /** Spent and reserved now on the line a budget keeps for this attribution. */
  async inspect(budgetId: string, attribution: Attribution) {
    const budget = this.#budgets.find((candidate) => candidate.id === budgetId);
    if (!budget) throw new InfergateError(ErrorCode.NotFound, `no budget "${budgetId}"`);
    const now = this.#clock();
    const span = windowAt(budget, now);
    const line = {
      key: lineKey(budget, attribution),
      buckets: span.buckets,
      current: span.current,
      expireAt: span.expireAt,
      limitNano: undefined,
    };
    const [state] = await this.#store.inspect([line], now);
    return {
      budgetId,
      line: line.key,
      spentUsd: (state?.spentNano ?? 0) / NANO_PER_USD,
      reservedUsd: (state?.reservedNano ?? 0) / NANO_PER_USD,
      hardLimitUsd: budget.hardLimitUsd,
      softLimitUsd: budget.softLimitUsd,
      windowStart: span.start,
      resetAt: span.resetAt,
    };
  }

  // Hot path (every call): the budgets that apply to an attribution are kept per attribution,
  // found by its parts (no key string built per call), and rebuilt only when a window moves on,
  // so a steady stream of calls allocates nothing here.
  #lines(attribution: Attribution, now: number): Applying {
    const known = this.#applying.get(attribution.tenant, attribution.key, attribution.model, undefined);
    if (known !== undefined && now >= known.from && now < known.until) return known;
    const applied: Applied[] = [];
    let from = Number.NEGATIVE_INFINITY;
    let until = Number.POSITIVE_INFINITY;
    for (const budget of this.#budgets) {
      if (!budgetApplies(budget, attribution)) continue;
      const span = windowAt(budget, now);
      const item: Applied = {
        budget,
        resetAt: span.resetAt,
        start: span.start,
        line: {
          key: known?.applied.find((old) => old.budget === budget)?.line.key ?? lineKey(budget, attribution),
          buckets: span.buckets,
          current: span.current,
          expireAt: span.expireAt,
          limitNano:
            budget.hardLimitUsd === undefined ? undefined : Math.floor(budget.hardLimitUsd * NANO_PER_USD),
        },
      };
      if (span.current > from) from = span.current;
      if (span.resetAt < until) until = span.resetAt;
      applied.push(item);
    }
    const applying: Applying = { applied, lines: applied.map((item) => item.line), from, until };
    this.#applying.set(attribution.tenant, attribution.key, attribution.model, undefined, applying);
    return applying;
  }

  /** Reports the line that refused the amount and throws BUDGET_EXCEEDED. */
  #reject(
    applied: readonly Applied[],
    result: Extract<ReserveResult, { ok: false }>,
    reservation: Reservation,
    now: number,
  ): never {
    const failed = applied[result.failedLine] as Applied;
    const event = this.#event(
      failed,
      result.lines[result.failedLine],
      reservation,
      failed.budget.hardLimitUsd,
    );
    this.#hooks.exceeded(event);
    throw new InfergateError(
      ErrorCode.BudgetExceeded,
      `budget "${failed.budget.id}" (${failed.line.key}) would pass its limit of ${formatUsd(event.limitUsd)}: spent ${formatUsd(event.spentUsd)}, reserved ${formatUsd(event.reservedUsd)}, this call ${formatUsd(event.estimateUsd)}`,
      {
        retryable: false,
        retryAfterMs: Math.max(0, failed.resetAt - now),
        ...(reservation.attribution.model === undefined ? {} : { model: reservation.attribution.model }),
        details: { ...event },
      },
    );
  }

  #event(
    item: Applied,
    state: LineState | undefined,
    reservation: Reservation,
    limitUsd: number | undefined,
  ): BudgetLimitEvent {
    return {
      budgetId: item.budget.id,
      line: item.line.key,
      attribution: reservation.attribution,
      limitUsd: limitUsd ?? 0,
      spentUsd: (state?.spentNano ?? 0) / NANO_PER_USD,
      reservedUsd: (state?.reservedNano ?? 0) / NANO_PER_USD,
      estimateUsd: reservation.estimateUsd,
      windowStart: item.start,
      resetAt: item.resetAt,
    };
  }
}

/** Waits for an asynchronous store's reserve until the signal aborts; a hold that lands late is released. */
function raceReserve(
  pending: Promise<ReserveResult>,
  signal: AbortSignal | undefined,
  release: () => unknown,
): Promise<ReserveResult> {
  return abortable(pending, signal, (late) => {
    if (late.ok) return release();
  }) as Promise<ReserveResult>;
}
