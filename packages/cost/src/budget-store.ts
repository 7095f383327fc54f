/**
 * Ledgers behind one interface: the in-memory store (default, one process) and the Redis store
 * (shared by every process). Amounts are integer nano-USD so that sums are exact in both.
 */

/** One budget line (budget × scope values) as the store sees it for one call. */
export interface LedgerLine {
  /** lineKey(): "<budget id>|tenant=acme". */
  key: string;
  /** Bucket starts (ms) whose sum is the counted spend. */
  buckets: readonly number[];
  /** The bucket a settle adds to. */
  current: number;
  /** When the current bucket may be deleted (ms since epoch). */
  expireAt: number;
  /** Hard limit in nano-USD; undefined: the line is only observed (soft limit). */
  limitNano: number | undefined;
}

export interface LineState {
  spentNano: number;
  reservedNano: number;
}

export interface ReserveRequest {
  id: string;
  amountNano: number;
  lines: readonly LedgerLine[];
  now: number;
  /** After this the reservation no longer holds budget (a crashed caller cannot hold it forever). */
  expiresAt: number;
  /**
   * The caller's signal. Aborted before the store starts: nothing is held and the store rejects
   * with the signal's typed reason. Aborted while the store waits: it rejects at once, and a hold
   * that still lands afterwards is released by the store.
   */
  signal?: AbortSignal | undefined;
}

export type ReserveResult =
  | { ok: true; lines: LineState[] }
  /** `failedLine`: index of the first line whose limit the amount would pass. */
  | { ok: false; failedLine: number; lines: LineState[] };

/** One settled call, as the report keeps it. */
export interface SpendEntry {
  at: number;
  tenant: string | undefined;
  key: string | undefined;
  model: string | undefined;
  provider: string | undefined;
  /** null: the call ran but had no price (counted under `unpricedCalls`). */
  costUsd: number | null;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  reservationId: string | undefined;
}

export interface SettleRequest {
  id: string;
  /** null: no price known; the reservation is dropped and no spend is added. */
  actualNano: number | null;
  lines: readonly LedgerLine[];
  now: number;
  entry: SpendEntry;
  /**
   * The caller's signal: the store stops waiting when it aborts. The spend is recorded all the
   * same (the call ran), so an abort never loses money, only the wait.
   */
  signal?: AbortSignal | undefined;
}

/** One row of the daily aggregates: spend of one tenant/key/model/provider on one UTC day. */
export interface DailySpend {
  day: string;
  tenant: string;
  key: string;
  model: string;
  provider: string;
  costUsd: number;
  calls: number;
  unpricedCalls: number;
  inputTokens: number;
  outputTokens: number;
}

export interface BudgetStore {
  /** Atomically: drop expired reservations, check every line, and hold `amountNano` on all or none. */
  reserve(request: ReserveRequest): Promise<ReserveResult> | ReserveResult;
  /** Drops the reservation (if still held) and adds the actual spend to every line and the report. */
  settle(request: SettleRequest): Promise<void> | void;
  /** Drops the reservation without spend (the call failed or was aborted). */
  release(id: string, now: number): Promise<void> | void;
  /** Spent and reserved of lines right now (expired reservations dropped first). */
  inspect(lines: readonly LedgerLine[], now: number): Promise<LineState[]> | LineState[];
  /** Daily aggregates for UTC days `fromDay`..`toDay` (YYYY-MM-DD, inclusive). */
  daily(fromDay: string, toDay: string): Promise<DailySpend[]> | DailySpend[];
  close?(): Promise<void> | void;
}

export const NANO_PER_USD = 1e9;

export function toNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

/** Estimates round up, so a reservation never holds less than the estimate. */
export function toNanoCeil(usd: number): number {
  return Math.ceil(usd * NANO_PER_USD - 1e-6);
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The UTC days from..to inclusive (YYYY-MM-DD), at most `limit` of them. */
export function daysBetween(fromDay: string, toDay: string, limit = 3660): string[] {
  const days: string[] = [];
  const end = Date.parse(`${toDay}T00:00:00Z`);
  for (let at = Date.parse(`${fromDay}T00:00:00Z`); at <= end && days.length < limit; at += 86_400_000)
    days.push(utcDay(at));
  return days;
}

/** The report field of one group: tenant, key, model, provider joined by tabs ("" when absent). */
export function groupField(entry: Pick<SpendEntry, 'tenant' | 'key' | 'model' | 'provider'>): string {
  return `${fieldPart(entry.tenant)}\t${fieldPart(entry.key)}\t${fieldPart(entry.model)}\t${fieldPart(entry.provider)}`;
}

// Module-level (not a closure inside groupField): every settle calls it four times.
function fieldPart(value: string | undefined): string {
  return value === undefined
    ? ''
    : value.includes('\t') || value.includes('\n')
      ? value.replace(/[\t\n]/g, ' ')
      : value;
}
