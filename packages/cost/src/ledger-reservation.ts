import { randomUUID } from 'node:crypto';
import type { Attribution, Budget } from './budget.js';
import type { Reservation } from './budget-ledger.js';
import type { LedgerLine } from './budget-store.js';
import type { HeldReservation } from './memory-budget-store.js';

/** One budget's line for an attribution, in the window that holds `now`. */
export interface Applied {
  budget: Budget;
  line: LedgerLine;
  resetAt: number;
  start: number;
}

/** The budgets that apply to one attribution, while `now` is in [from, until): every line's bucket. */
export interface Applying {
  applied: Applied[];
  lines: LedgerLine[];
  from: number;
  until: number;
}

// Unique across processes (a Redis store is shared): a random prefix per process and a sequence.
const idPrefix = `${randomUUID().slice(0, 8)}-`;
let sequence = 0;

export function nextReservationId(): string {
  return `${idPrefix}${++sequence}`;
}

/** Reservations made elsewhere (not by `detached`) that were settled or released. */
const finishedForeign = new WeakSet<Reservation>();

/**
 * The ledger's own reservations carry their settled-or-released mark in a private field: a global
 * WeakSet entry per call made every reservation an ephemeron for the garbage collector to trace.
 */
export class LedgerReservation implements Reservation {
  #finished = false;
  /** The lines reserve held, reused by settle while `now` stays in every line's current bucket. */
  #applying: Applying | undefined;
  /** The in-memory store's record of the hold, handed back at settle instead of a lookup by id. */
  #held: HeldReservation | undefined;
  constructor(
    readonly id: string,
    readonly estimateUsd: number,
    readonly attribution: Readonly<Attribution>,
    readonly provider: string | undefined,
    readonly createdAt: number,
    readonly expiresAt: number,
  ) {}

  static keep(reservation: Reservation, applying: Applying, held: HeldReservation | undefined): void {
    if (!(reservation instanceof LedgerReservation)) return;
    reservation.#applying = applying;
    reservation.#held = held;
  }

  /** The kept lines when they are still the ones `#lines` would give at `now`. */
  static linesAt(reservation: Reservation, now: number): LedgerLine[] | undefined {
    if (!(reservation instanceof LedgerReservation)) return undefined;
    const applying = reservation.#applying;
    return applying !== undefined && now >= applying.from && now < applying.until
      ? applying.lines
      : undefined;
  }

  static held(reservation: Reservation): HeldReservation | undefined {
    return reservation instanceof LedgerReservation ? reservation.#held : undefined;
  }

  /** Marks the reservation finished; false when it already was (settle and release are idempotent). */
  static finish(reservation: Reservation): boolean {
    if (#finished in reservation) {
      if (reservation.#finished) return false;
      reservation.#finished = true;
      return true;
    }
    if (finishedForeign.has(reservation)) return false;
    finishedForeign.add(reservation);
    return true;
  }
}
