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
import { SpendLine } from './internal/spend-line.js';
import { SpendLog } from './internal/spend-log.js';
import { TupleMap } from './internal/tuple-map.js';

/**
 * A reservation the store holds. Held reservations form a list (for the expiry sweep); those that
 * may be looked up by id are also in `#byId`. The ledger's own reservations keep their record and
 * hand it back at settle (`settleHeld`), so they cost no Map entry: a string-keyed Map that gains
 * and loses one entry per call rehashed and shrank its table every few calls.
 */
class Held {
  previous: Held | undefined = undefined;
  next: Held | undefined = undefined;
  /** False once settled, released or expired. */
  live = true;
  indexed = false;
  constructor(
    readonly store: MemoryBudgetStore,
    readonly id: string,
    readonly amount: number,
    readonly lines: readonly LedgerLine[],
    readonly expiresAt: number,
    /** The lines' state as reserve found it. */
    readonly states: LineState[],
  ) {}
}

export type { Held as HeldReservation };

type ReserveFailure = Extract<ReserveResult, { ok: false }>;

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

/** A report group (tenant, key, model, provider) and its totals on the day it last settled on. */
interface Group {
  field: string;
  day: string;
  totals: DailyTotals | undefined;
}

/** The ledger's way in (not exported by the package): reserve and finish by the held record. */
export let reserveHeld: (store: MemoryBudgetStore, request: ReserveRequest) => Held | ReserveFailure;
/** Settles `held` when this store holds it, else the reservation `request.id` names. */
export let settleHeld: (store: MemoryBudgetStore, held: Held | undefined, request: SettleRequest) => void;
export let releaseHeld: (store: MemoryBudgetStore, held: Held | undefined, id: string, now: number) => void;

/**
 * The default ledger: one process, exact and fast (no I/O, no promises). Every method runs to
 * completion on the event loop, which makes reserve's check-and-hold atomic.
 */
export class MemoryBudgetStore implements BudgetStore {
  readonly #lines = new Map<string, SpendLine>();
  readonly #byId = new Map<string, Held>();
  #first: Held | undefined;
  #last: Held | undefined;
  #heldCount = 0;
  /** Held records not in `#byId`; once one is looked up by id, every record is indexed. */
  #unindexed = 0;
  #indexAll = false;
  readonly #daily = new Map<string, Map<string, DailyTotals>>();
  readonly #groups = new TupleMap<Group>(10_000);
  readonly #log: SpendLog;
  #nextExpiry = Number.POSITIVE_INFINITY;
  #dayNumber = Number.NaN;
  #day = '';

  static {
    reserveHeld = (store, request) => store.#hold(request, store.#indexAll);
    settleHeld = (store, held, request) => store.#settle(held, request);
    releaseHeld = (store, held, id, now) => {
      store.#drop(held !== undefined && held.store === store ? held : store.#find(id));
      store.#sweep(now);
    };
  }

  constructor(options: MemoryBudgetStoreOptions = {}) {
    parseOptions(memoryOptionsSchema, options, 'memory budget store options');
    this.#log = new SpendLog(options.logSize ?? 10_000);
  }

  reserve(request: ReserveRequest): ReserveResult {
    const outcome = this.#hold(request, true);
    return outcome instanceof Held ? { ok: true, lines: outcome.states } : outcome;
  }

  settle(request: SettleRequest): void {
    this.#settle(undefined, request);
  }

  release(id: string, now: number): void {
    this.#drop(this.#find(id));
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
    return this.#log.entries();
  }

  /** Reservations currently held (for tests and diagnostics). */
  get heldCount(): number {
    return this.#heldCount;
  }

  #hold(request: ReserveRequest, index: boolean): Held | ReserveFailure {
    throwIfAborted(request.signal);
    this.#sweep(request.now);
    // Sized up front: an empty array that grows by push got room for 17 elements.
    const states = new Array<LineState>(request.lines.length);
    let failedLine = -1;
    for (let i = 0; i < request.lines.length; i++) {
      const line = request.lines[i] as LedgerLine;
      const state = this.#state(line);
      states[i] = state;
      if (
        failedLine === -1 &&
        line.limitNano !== undefined &&
        state.spentNano + state.reservedNano + request.amountNano > line.limitNano
      )
        failedLine = i;
    }
    if (failedLine !== -1) return { ok: false, failedLine, lines: states };
    for (const line of request.lines) this.#line(line.key).reserved += request.amountNano;
    const held = new Held(this, request.id, request.amountNano, request.lines, request.expiresAt, states);
    if (index) {
      this.#byId.set(held.id, held);
      held.indexed = true;
    } else this.#unindexed++;
    held.previous = this.#last;
    if (this.#last === undefined) this.#first = held;
    else this.#last.next = held;
    this.#last = held;
    this.#heldCount++;
    if (request.expiresAt < this.#nextExpiry) this.#nextExpiry = request.expiresAt;
    return held;
  }

  #settle(held: Held | undefined, request: SettleRequest): void {
    this.#drop(held !== undefined && held.store === this ? held : this.#find(request.id));
    if (request.actualNano !== null && request.actualNano > 0) {
      for (const ledgerLine of request.lines) {
        this.#line(ledgerLine.key).add(
          ledgerLine.current,
          ledgerLine.buckets[0] as number,
          request.actualNano,
        );
      }
    }
    this.#record(request.entry, request.actualNano);
  }

  /** The held record of `id`, if still held. The first miss indexes every record from then on. */
  #find(id: string): Held | undefined {
    const held = this.#byId.get(id);
    if (held !== undefined || this.#unindexed === 0) return held;
    // A reservation the ledger holds by its record, looked up by id (a copy of it settled, or
    // `store.release(id)` called directly): index them all, so that this scan happens once.
    this.#indexAll = true;
    for (let item = this.#first; item !== undefined; item = item.next) {
      if (item.indexed) continue;
      this.#byId.set(item.id, item);
      item.indexed = true;
    }
    this.#unindexed = 0;
    return this.#byId.get(id);
  }

  #record(entry: SpendEntry, nano: number | null): void {
    this.#log.push(entry);
    const dayNumber = Math.floor(entry.at / 86_400_000);
    if (dayNumber !== this.#dayNumber) {
      this.#dayNumber = dayNumber;
      this.#day = utcDay(entry.at);
    }
    const totals = this.#totals(entry);
    totals.calls += 1;
    if (nano === null) totals.unpriced += 1;
    else totals.nano += nano;
    totals.input += entry.inputTokens ?? 0;
    totals.output += entry.outputTokens ?? 0;
  }

  /** Today's totals of the entry's group, found by its parts (no joined key built per settle). */
  #totals(entry: SpendEntry): DailyTotals {
    const day = this.#day;
    let group = this.#groups.get(entry.tenant, entry.key, entry.model, entry.provider);
    if (group === undefined) {
      group = { field: groupField(entry), day: '', totals: undefined };
      this.#groups.set(entry.tenant, entry.key, entry.model, entry.provider, group);
    }
    if (group.day === day && group.totals !== undefined) return group.totals;
    let groups = this.#daily.get(day);
    if (!groups) {
      groups = new Map();
      this.#daily.set(day, groups);
    }
    let totals = groups.get(group.field);
    if (!totals) {
      totals = { nano: 0, calls: 0, unpriced: 0, input: 0, output: 0 };
      groups.set(group.field, totals);
    }
    group.day = day;
    group.totals = totals;
    return totals;
  }

  #line(key: string): SpendLine {
    let line = this.#lines.get(key);
    if (!line) {
      line = new SpendLine();
      this.#lines.set(key, line);
    }
    return line;
  }

  #state(ledgerLine: LedgerLine): LineState {
    const line = this.#lines.get(ledgerLine.key);
    if (!line) return { spentNano: 0, reservedNano: 0 };
    return { spentNano: line.spent(ledgerLine.buckets), reservedNano: line.reserved };
  }

  /** Frees what `held` holds and takes it off the list (nothing when it is no longer held). */
  #drop(held: Held | undefined): void {
    if (held === undefined || !held.live) return;
    held.live = false;
    if (!held.indexed) this.#unindexed--;
    else if (this.#byId.get(held.id) === held) this.#byId.delete(held.id);
    if (held.previous === undefined) this.#first = held.next;
    else held.previous.next = held.next;
    if (held.next === undefined) this.#last = held.previous;
    else held.next.previous = held.previous;
    held.previous = undefined;
    held.next = undefined;
    this.#heldCount--;
    for (const ledgerLine of held.lines) {
      const line = this.#lines.get(ledgerLine.key);
      if (line) line.reserved -= held.amount;
    }
  }

  /** Drops expired reservations; runs a full pass only once the earliest known expiry has passed. */
  #sweep(now: number): void {
    if (now < this.#nextExpiry) return;
    let next = Number.POSITIVE_INFINITY;
    for (let held = this.#first; held !== undefined; ) {
      const following = held.next;
      if (held.expiresAt <= now) this.#drop(held);
      else if (held.expiresAt < next) next = held.expiresAt;
      held = following;
    }
    this.#nextExpiry = next;
  }
}
