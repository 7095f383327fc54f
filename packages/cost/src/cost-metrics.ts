import { createLiveGauge, lazyInstruments } from '@infergate/core';
import { otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes, ObservableResult } from '@opentelemetry/api';
import type { Reservation } from './budget-ledger.js';
import { VERSION } from './version.js';

/** A line's room left under its hard limit, as of the last reservation this process made on it. */
interface LineRoom {
  budget: string;
  line: string;
  remainingUsd: number;
}

// Trackers whose budget lines the gauge reports; bounded per tracker (see CostMetrics).
const live = new Set<CostMetrics>();

// Rebuilt when the application registers (or replaces) its MeterProvider, even after the tracker was made.
const registeredInstruments = lazyInstruments('@infergate/cost', VERSION, (meter) => {
  createLiveGauge(
    meter,
    'infergate.cost.budget.remaining',
    {
      description: 'USD left under a budget’s hard limit, as of this process’s last reservation on it',
      unit: '{USD}',
    },
    live,
  );
  return {
    spent: meter.createCounter('infergate.cost.spent', {
      description: 'Cost of settled calls, in US dollars, by model and provider (and tenant when opted in)',
      unit: '{USD}',
    }),
    reservations: meter.createUpDownCounter('infergate.cost.reservations', {
      description: 'Budget reservations held: reserved and not yet settled or released',
      unit: '{reservation}',
    }),
  };
});

/**
 * The cost instruments, or `undefined` while no MeterProvider is registered. While nothing at all
 * is registered with the OpenTelemetry API this answers without loading it (decision 0025, fourth
 * addendum).
 */
function instruments() {
  return otelRegistered() ? registeredInstruments() : undefined;
}

/** The counter a held reservation was counted on, to take it off the same one. */
type ReservationCounter = NonNullable<ReturnType<typeof instruments>>['reservations'];

const MAX_LINES = 10_000;

/**
 * The cost package's metrics for one tracker. Tenant is a metric attribute only with
 * `metricsByTenant`: every distinct tenant makes a new time series in the backend, and a service
 * with open sign-up has no bound on them.
 */
export class CostMetrics {
  readonly #byTenant: boolean;
  readonly #rooms = new Map<string, LineRoom>();
  /** Reservations counted held, each with the counter it was counted on (see `held`). */
  readonly #held = new WeakMap<Reservation, ReservationCounter>();
  readonly #spentAttributes = new Map<string, Attributes>();

  constructor(byTenant: boolean) {
    this.#byTenant = byTenant;
    live.add(this);
    instruments();
  }

  /**
   * A reservation now holds budget. Counted only while an SDK records, and taken off at settle on
   * the counter it was counted on: a reservation counted nowhere is not taken off at all, and one
   * counted on a MeterProvider since replaced (or removed) is taken off that provider's count, so
   * neither count goes below zero or keeps it for good when the application registers or replaces
   * its SDK between a reserve and its settle.
   */
  held(reservation: Reservation): void {
    const recording = instruments();
    if (recording !== undefined) {
      this.#held.set(reservation, recording.reservations);
      recording.reservations.add(1);
    }
  }

  /** A line's room left under its hard limit after the latest reservation on it (updated in place). */
  room(budget: string, line: string, remainingUsd: number): void {
    const known = this.#rooms.get(line);
    if (known !== undefined) {
      known.budget = budget;
      known.remainingUsd = remainingUsd;
      return;
    }
    if (this.#rooms.size >= MAX_LINES) this.#rooms.clear();
    this.#rooms.set(line, { budget, line, remainingUsd });
  }

  /** A reservation was settled or released (or held nothing). */
  finished(reservation: Reservation): void {
    const counted = this.#held.get(reservation);
    if (counted === undefined) return;
    this.#held.delete(reservation);
    counted.add(-1);
  }

  spent(
    usd: number,
    tenant: string | undefined,
    model: string | undefined,
    provider: string | undefined,
  ): void {
    const recording = instruments();
    if (recording === undefined) return;
    const id = `${this.#byTenant ? (tenant ?? '') : ''}\u0001${model ?? ''}\u0001${provider ?? ''}`;
    let attributes = this.#spentAttributes.get(id);
    if (attributes === undefined) {
      attributes = {};
      if (model !== undefined) attributes['gen_ai.request.model'] = model;
      if (provider !== undefined) attributes['gen_ai.provider.name'] = provider;
      if (this.#byTenant && tenant !== undefined) attributes['infergate.tenant'] = tenant;
      if (this.#spentAttributes.size >= MAX_LINES) this.#spentAttributes.clear();
      this.#spentAttributes.set(id, attributes);
    }
    recording.spent.add(usd, attributes);
  }

  /**
   * Without `metricsByTenant` one point per budget: the least room any of its lines has left (a
   * per-tenant budget's tightest tenant). With it, one point per line.
   */
  observe(result: ObservableResult): void {
    if (this.#byTenant) {
      for (const room of this.#rooms.values())
        result.observe(room.remainingUsd, {
          'infergate.budget': room.budget,
          'infergate.budget.line': room.line,
        });
      return;
    }
    const least = new Map<string, number>();
    for (const room of this.#rooms.values()) {
      const seen = least.get(room.budget);
      if (seen === undefined || room.remainingUsd < seen) least.set(room.budget, room.remainingUsd);
    }
    for (const [budget, remainingUsd] of least) result.observe(remainingUsd, { 'infergate.budget': budget });
  }

  close(): void {
    live.delete(this);
  }
}
