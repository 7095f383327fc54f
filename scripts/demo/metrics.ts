// What the demo measures: per-tenant latencies and outcomes, a timeline sampled every tick, and the
// notable events (faults, breaker transitions, budget alerts).

/** Latencies kept per tenant and kind before reservoir sampling takes over (bounds memory). */
const MAX_SAMPLES = 200_000;

export class LatencySamples {
  readonly values: number[] = [];
  seen = 0;
  #state = 0x9e3779b9;

  add(ms: number): void {
    this.seen++;
    if (this.values.length < MAX_SAMPLES) {
      this.values.push(ms);
      return;
    }
    // Reservoir sampling with a small xorshift generator: every sample is kept with equal chance.
    this.#state ^= this.#state << 13;
    this.#state ^= this.#state >>> 17;
    this.#state ^= this.#state << 5;
    const slot = (this.#state >>> 0) % this.seen;
    if (slot < MAX_SAMPLES) this.values[slot] = ms;
  }
}

/** The q-quantile (0..1) of values, nearest rank; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export interface KindStats {
  /** Calls started. */
  calls: number;
  ok: number;
  /** Failed calls by error code. */
  errors: Map<string, number>;
  /** Calls not sent because the tenant's client-side in-flight cap was reached. */
  shed: number;
  latencies: LatencySamples;
}

function kindStats(): KindStats {
  return { calls: 0, ok: 0, errors: new Map(), shed: 0, latencies: new LatencySamples() };
}

export interface TenantStats {
  triton: KindStats;
  /** Rows of successful Triton calls. */
  rows: number;
  chat: KindStats;
  /** Successful chats by the provider that answered. */
  chatBy: Map<string, number>;
}

export interface DemoEvent {
  /** Seconds since the load started. */
  t: number;
  kind: 'fault' | 'recover' | 'breaker' | 'budget' | 'info';
  text: string;
  /** A fault opens the window of this name, a recovery closes it (shaded in the report's charts). */
  window?: string;
}

/** One timeline point: what happened in the tick that ends at `t`. */
export interface TimePoint {
  t: number;
  /** Successful Triton items per second, by tenant. */
  itemsPerS: Record<string, number>;
  /** Mean rows per batch sent in this tick, by endpoint (absent: no batch). */
  batchSize: Record<string, number>;
  /** Batches sent in this tick, by endpoint. */
  batches: Record<string, number>;
  /** Router fallbacks in this tick (Triton and chat). */
  fallbacks: number;
  chatFallbacks: number;
  /** Failed Triton calls in this tick. */
  errors: number;
  /** Successful chats in this tick, by provider. */
  chatBy: Record<string, number>;
  /** p99 Triton latency of this tick, ms (NaN: no call finished). */
  p99Ms: number;
  /** Calls queued in the batchers at the tick. */
  queued: number;
}

/** A breaker's state over time. */
export interface BreakerSpan {
  target: string;
  state: 'open' | 'half-open';
  from: number;
  /** Undefined while still in that state. */
  to: number | undefined;
}

/** Counters of a batcher, as far as the timeline needs them. */
export interface BatchCounters {
  batches: number;
  rows: number;
  queued: number;
}

export class Recorder {
  readonly tenants = new Map<string, TenantStats>();
  readonly events: DemoEvent[] = [];
  readonly timeline: TimePoint[] = [];
  readonly breakerSpans: BreakerSpan[] = [];
  /** Fallbacks by router ('triton' or 'chat'). */
  readonly fallbacks = { triton: 0, chat: 0 };
  /** Transitions to open, by target. */
  readonly trips = new Map<string, number>();
  /** Wrong output rows seen when checking simulated_gpu results (must stay 0). */
  mismatches = 0;
  /** Seconds the load ran, set when it stops. */
  elapsedS = 0;
  readonly #startedAt: number;
  #tick = this.#emptyTick();
  #lastTickAt = 0;
  #lastCounters = new Map<string, BatchCounters>();
  #lastFallbacks = { triton: 0, chat: 0 };

  constructor(tenantNames: readonly string[], startedAt = performance.now()) {
    this.#startedAt = startedAt;
    for (const name of tenantNames)
      this.tenants.set(name, { triton: kindStats(), rows: 0, chat: kindStats(), chatBy: new Map() });
  }

  /** Seconds since the load started. */
  now(): number {
    return (performance.now() - this.#startedAt) / 1000;
  }

  #emptyTick() {
    return {
      items: new Map<string, number>(),
      errors: 0,
      latencies: [] as number[],
      chatBy: new Map<string, number>(),
    };
  }

  #tenant(name: string): TenantStats {
    const found = this.tenants.get(name);
    if (found === undefined) throw new Error(`unknown tenant ${name}`);
    return found;
  }

  started(tenant: string, kind: 'triton' | 'chat'): void {
    this.#tenant(tenant)[kind].calls++;
  }

  shed(tenant: string, kind: 'triton' | 'chat'): void {
    this.#tenant(tenant)[kind].shed++;
  }

  tritonOk(tenant: string, rows: number, latencyMs: number): void {
    const stats = this.#tenant(tenant);
    stats.triton.ok++;
    stats.rows += rows;
    stats.triton.latencies.add(latencyMs);
    this.#tick.items.set(tenant, (this.#tick.items.get(tenant) ?? 0) + rows);
    this.#tick.latencies.push(latencyMs);
  }

  failed(tenant: string, kind: 'triton' | 'chat', code: string): void {
    const errors = this.#tenant(tenant)[kind].errors;
    errors.set(code, (errors.get(code) ?? 0) + 1);
    if (kind === 'triton') this.#tick.errors++;
  }

  chatOk(tenant: string, provider: string, latencyMs: number): void {
    const stats = this.#tenant(tenant);
    stats.chat.ok++;
    stats.chat.latencies.add(latencyMs);
    stats.chatBy.set(provider, (stats.chatBy.get(provider) ?? 0) + 1);
    this.#tick.chatBy.set(provider, (this.#tick.chatBy.get(provider) ?? 0) + 1);
  }

  fallback(router: 'triton' | 'chat'): void {
    this.fallbacks[router]++;
  }

  event(kind: DemoEvent['kind'], text: string, window?: string): DemoEvent {
    const event: DemoEvent = { t: this.now(), kind, text, ...(window === undefined ? {} : { window }) };
    this.events.push(event);
    return event;
  }

  /** Records a breaker transition; returns true when it tripped (went to open). */
  breaker(target: string, from: string, to: 'closed' | 'open' | 'half-open'): boolean {
    const t = this.now();
    const current = this.breakerSpans.find((span) => span.target === target && span.to === undefined);
    if (current !== undefined) current.to = t;
    if (to !== 'closed') this.breakerSpans.push({ target, state: to, from: t, to: undefined });
    const tripped = to === 'open' && from !== 'open';
    if (tripped) this.trips.set(target, (this.trips.get(target) ?? 0) + 1);
    return tripped;
  }

  /** Closes the current tick: turns counters into one timeline point. */
  tick(counters: ReadonlyMap<string, BatchCounters>): TimePoint {
    const t = this.now();
    const span = Math.max(1e-3, t - this.#lastTickAt);
    const itemsPerS: Record<string, number> = {};
    for (const name of this.tenants.keys()) itemsPerS[name] = (this.#tick.items.get(name) ?? 0) / span;
    const batchSize: Record<string, number> = {};
    const batches: Record<string, number> = {};
    let queued = 0;
    for (const [endpoint, now] of counters) {
      const before = this.#lastCounters.get(endpoint) ?? { batches: 0, rows: 0, queued: 0 };
      const sent = now.batches - before.batches;
      batches[endpoint] = sent;
      if (sent > 0) batchSize[endpoint] = (now.rows - before.rows) / sent;
      queued += now.queued;
    }
    const point: TimePoint = {
      t,
      itemsPerS,
      batchSize,
      batches,
      fallbacks: this.fallbacks.triton - this.#lastFallbacks.triton,
      chatFallbacks: this.fallbacks.chat - this.#lastFallbacks.chat,
      errors: this.#tick.errors,
      chatBy: Object.fromEntries(this.#tick.chatBy),
      p99Ms: quantile(this.#tick.latencies, 0.99),
      queued,
    };
    this.timeline.push(point);
    this.#lastCounters = new Map(counters);
    this.#lastFallbacks = { ...this.fallbacks };
    this.#lastTickAt = t;
    this.#tick = this.#emptyTick();
    return point;
  }

  /** Ends open breaker spans at the end of the run. */
  finish(): void {
    this.elapsedS = this.now();
    for (const span of this.breakerSpans) span.to ??= this.elapsedS;
  }
}
