import { parseOptions } from '@infergate/core';
import { z } from 'zod';
import {
  type BudgetStore,
  type DailySpend,
  daysBetween,
  groupField,
  type LedgerLine,
  type LineState,
  NANO_PER_USD,
  type ReserveRequest,
  type ReserveResult,
  type SettleRequest,
  type SpendEntry,
  utcDay,
} from './budget-store.js';
import { throwIfAborted } from './internal/abortable.js';

interface Line {
  /** Bucket start → spent nano-USD. */
  buckets: Map<number, number>;
  reserved: number;
}

interface Held {
  amount: number;
  lines: readonly LedgerLine[];
  expiresAt: number;
}

interface DailyTotals {
  nano: number;
  calls: number;
  unpriced: number;
  input: number;
  output: number;
}

export interface MemoryBudgetStoreOptions {
  /** Settled entries kept for `entries()`; older ones are dropped first. @default 10000 */
  logSize?: number;
}

const memoryOptionsSchema = z.strictObject({ logSize: z.number().int().positive().optional() });

/**
 * The default ledger: one process, exact and fast (no I/O, no promises). Every method runs to
 * completion on the event loop, which makes reserve's check-and-hold atomic.
 */
export class MemoryBudgetStore implements BudgetStore {
  readonly #lines = new Map<string, Line>();
  readonly #held = new Map<string, Held>();
  readonly #daily = new Map<string, Map<string, DailyTotals>>();
  readonly #log: SpendEntry[] = [];
  readonly #logSize: number;
  #nextExpiry = Number.POSITIVE_INFINITY;
  #logStart = 0;
  #dayNumber = Number.NaN;
  #day = '';

  constructor(options: MemoryBudgetStoreOptions = {}) {
    parseOptions(memoryOptionsSchema, options, 'memory budget store options');
    this.#logSize = options.logSize ?? 10_000;
  }

  reserve(request: ReserveRequest): ReserveResult {
    throwIfAborted(request.signal);
    this.#sweep(request.now);
    const states: LineState[] = [];
    let failedLine = -1;
    for (let i = 0; i < request.lines.length; i++) {
      const line = request.lines[i] as LedgerLine;
      const state = this.#state(line);
      states.push(state);
      if (
        failedLine === -1 &&
        line.limitNano !== undefined &&
        state.spentNano + state.reservedNano + request.amountNano > line.limitNano
      )
        failedLine = i;
    }
    if (failedLine !== -1) return { ok: false, failedLine, lines: states };
    for (const line of request.lines) this.#line(line.key).reserved += request.amountNano;
    this.#held.set(request.id, {
      amount: request.amountNano,
      lines: request.lines,
      expiresAt: request.expiresAt,
    });
    if (request.expiresAt < this.#nextExpiry) this.#nextExpiry = request.expiresAt;
    return { ok: true, lines: states };
  }

  settle(request: SettleRequest): void {
    this.#drop(request.id);
    if (request.actualNano !== null && request.actualNano > 0) {
      for (const ledgerLine of request.lines) {
        const line = this.#line(ledgerLine.key);
        const oldest = ledgerLine.buckets[0] as number;
        if (!line.buckets.has(ledgerLine.current))
          for (const start of line.buckets.keys()) if (start < oldest) line.buckets.delete(start);
        line.buckets.set(
          ledgerLine.current,
          (line.buckets.get(ledgerLine.current) ?? 0) + request.actualNano,
        );
      }
    }
    this.#record(request.entry, request.actualNano);
  }

  release(id: string, now: number): void {
    this.#drop(id);
    this.#sweep(now);
  }

  inspect(lines: readonly LedgerLine[], now: number): LineState[] {
    this.#sweep(now);
    return lines.map((line) => this.#state(line));
  }

  daily(fromDay: string, toDay: string): DailySpend[] {
    const rows: DailySpend[] = [];
    for (const day of daysBetween(fromDay, toDay)) {
      for (const [field, totals] of this.#daily.get(day) ?? []) {
        const [tenant = '', key = '', model = '', provider = ''] = field.split('\t');
        rows.push({
          day,
          tenant,
          key,
          model,
          provider,
          costUsd: totals.nano / NANO_PER_USD,
          calls: totals.calls,
          unpricedCalls: totals.unpriced,
          inputTokens: totals.input,
          outputTokens: totals.output,
        });
      }
    }
    return rows;
  }

  /** The latest settled entries, oldest first (at most `logSize`). */
  entries(): SpendEntry[] {
    return [...this.#log.slice(this.#logStart), ...this.#log.slice(0, this.#logStart)];
  }

  /** Reservations currently held (for tests and diagnostics). */
  get heldCount(): number {
    return this.#held.size;
  }

  #record(entry: SpendEntry, nano: number | null): void {
    // A ring: once full, the oldest entry is overwritten (no O(n) shifting on the hot path).
    if (this.#log.length < this.#logSize) this.#log.push(entry);
    else {
      this.#log[this.#logStart] = entry;
      this.#logStart = (this.#logStart + 1) % this.#logSize;
    }
    const dayNumber = Math.floor(entry.at / 86_400_000);
    if (dayNumber !== this.#dayNumber) {
      this.#dayNumber = dayNumber;
      this.#day = utcDay(entry.at);
    }
    const day = this.#day;
    let groups = this.#daily.get(day);
    if (!groups) {
      groups = new Map();
      this.#daily.set(day, groups);
    }
    const field = groupField(entry);
    let totals = groups.get(field);
    if (!totals) {
      totals = { nano: 0, calls: 0, unpriced: 0, input: 0, output: 0 };
      groups.set(field, totals);
    }
    totals.calls += 1;
    if (nano === null) totals.unpriced += 1;
    else totals.nano += nano;
    totals.input += entry.inputTokens ?? 0;
    totals.output += entry.outputTokens ?? 0;
  }

  #line(key: string): Line {
    let line = this.#lines.get(key);
    if (!line) {
      line = { buckets: new Map(), reserved: 0 };
      this.#lines.set(key, line);
    }
    return line;
  }

  #state(ledgerLine: LedgerLine): LineState {
    const line = this.#lines.get(ledgerLine.key);
    if (!line) return { spentNano: 0, reservedNano: 0 };
    let spent = 0;
    for (const start of ledgerLine.buckets) spent += line.buckets.get(start) ?? 0;
    return { spentNano: spent, reservedNano: line.reserved };
  }

  #drop(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    this.#held.delete(id);
    for (const ledgerLine of held.lines) {
      const line = this.#lines.get(ledgerLine.key);
      if (line) line.reserved -= held.amount;
    }
  }

  /** Drops expired reservations; runs a full pass only once the earliest known expiry has passed. */
  #sweep(now: number): void {
    if (now < this.#nextExpiry) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [id, held] of this.#held) {
      if (held.expiresAt <= now) this.#drop(id);
      else if (held.expiresAt < next) next = held.expiresAt;
    }
    this.#nextExpiry = next;
  }
}
