/** How the adaptive policy forms batches for one model version. */
export type FillMode = 'fill' | 'eager';

/** What the server's own dynamic batcher is configured to do (from the model config). */
export interface ServerBatching {
  /** Triton's `max_queue_delay_microseconds`. */
  maxQueueDelayUs: number;
  /** Triton's `preferred_batch_size` list (ascending), empty when none. */
  preferredBatchSizes: readonly number[];
}

/** Deltas of the server's statistics over one interval, per the statistics RPC. */
export interface ServerQueueSample {
  /** Requests the server completed in the interval. */
  requests: number;
  /** Executions (batches) the server ran in the interval. */
  executions: number;
  /** Time requests spent in the server's queue, µs, summed. */
  queueUs: number;
  /** Compute time, µs, summed over requests (each request counts its execution's duration). */
  computeUs: number;
}

/** What the server's statistics said, for `stats()` and the decision record. */
export type ServerVerdict = 'unknown' | 'idle' | 'saturated';

const SERVICE_WEIGHT = 0.2;
const RETURN_WEIGHT = 0.2;
/** Server queue time beyond its own batching delay, as a share of one execution, that counts as saturated. */
const SATURATION_SHARE = 0.25;
/** Requests per server execution above which the server is merging our requests. */
const MERGED_REQUESTS = 1.2;

/**
 * The adaptive policy's decisions for one lane, as pure arithmetic over the times and sizes it is
 * told about (no timers, no clock of its own), so tests drive it with plain numbers.
 *
 * Fill mode, for a server that executes one batch at a time or does not batch itself:
 * - With no batch in flight, queued calls go at once, unless the callers of a batch that just came
 *   back are expected to send again within one service time: then the batch waits for them (at
 *   most one measured service time and never past `maxQueueDelayMs` for its oldest call). "Expected"
 *   is learned: the share of a batch's rows that arrived again within one service time of its
 *   answer (1 for closed-loop callers, small for independent arrivals).
 * - A further slot takes only a full batch, or a partial one whose oldest call has waited
 *   `maxQueueDelayMs`: a second partial batch would wait in the server's queue behind the first
 *   instead of joining the next batch.
 *
 * Eager mode, for a server whose dynamic batcher merges concurrent requests anyway: whatever is
 * queued goes whenever a slot is free, so the client never queues a call twice.
 */
export class FillPlanner {
  readonly cap: number;
  readonly maxQueueDelayMs: number;
  readonly server: ServerBatching | undefined;
  mode: FillMode;
  verdict: ServerVerdict = 'unknown';
  #serviceMs = 0;
  #services = 0;
  /** Share of an answered batch's rows that come back within one service time. */
  #returnShare = 0;
  #returnSamples = 0;
  /** The open return window: rows answered, rows arrived since, and when it closes. */
  #window: { rows: number; arrived: number; until: number } | undefined;
  /** Client batches and rows since the last server sample (to tell whether filling still pays). */
  #batches = 0;
  #rows = 0;

  constructor(cap: number, maxQueueDelayMs: number, server: ServerBatching | undefined, mode: FillMode) {
    this.cap = cap;
    this.maxQueueDelayMs = maxQueueDelayMs;
    this.server = server;
    this.mode = mode;
  }

  /** Learned batch round trip (exponentially weighted), once three batches were measured; 0 before. */
  get serviceMs(): number {
    return this.#services >= 3 ? this.#serviceMs : 0;
  }

  /** The learned share of answered rows that come back at once (0..1). */
  get returnShare(): number {
    return this.#returnShare;
  }

  /** A call of `rows` rows was queued. */
  arrived(now: number, rows: number): void {
    const window = this.#window;
    if (window === undefined) return;
    if (now > window.until) this.#closeWindow();
    else window.arrived += rows;
  }

  /** A batch of `rows` rows was sent. */
  sent(rows: number): void {
    this.#batches += 1;
    this.#rows += rows;
  }

  /** A batch of `rows` rows came back after `serviceMs`; its callers may send again. */
  answered(now: number, rows: number, serviceMs: number): void {
    this.#serviceMs =
      this.#services === 0 ? serviceMs : this.#serviceMs * (1 - SERVICE_WEIGHT) + serviceMs * SERVICE_WEIGHT;
    this.#services += 1;
    if (this.#window !== undefined) this.#closeWindow();
    this.#window = { rows, arrived: 0, until: now + Math.min(this.#serviceMs, this.maxQueueDelayMs) };
  }

  #closeWindow(): void {
    const window = this.#window;
    if (window === undefined) return;
    this.#window = undefined;
    const share = Math.min(1, window.arrived / window.rows);
    this.#returnShare =
      this.#returnSamples === 0 ? share : this.#returnShare * (1 - RETURN_WEIGHT) + share * RETURN_WEIGHT;
    this.#returnSamples += 1;
  }

  /** Rows still expected back from the last answered batch (0 once its window has closed). */
  expectedRows(now: number): number {
    const window = this.#window;
    if (window === undefined || now > window.until) return 0;
    return Math.max(0, Math.floor(this.#returnShare * window.rows) - window.arrived);
  }

  /**
   * Whether the batch at the head of the queue should wait: `undefined` to send it now, else the
   * time at which to decide again (arrivals and answers also trigger a new decision).
   */
  hold(now: number, queuedRows: number, oldestAt: number, inFlight: number): number | undefined {
    if (this.mode === 'eager' || queuedRows >= this.cap) return undefined;
    const latest = oldestAt + this.maxQueueDelayMs;
    if (now >= latest) return undefined;
    if (inFlight > 0) return latest;
    const expected = this.expectedRows(now);
    if (expected < 1) return undefined;
    const target = this.#target(queuedRows + expected);
    if (queuedRows >= target) return undefined;
    return Math.min(latest, (this.#window as { until: number }).until);
  }

  /** The batch to wait for: the expected rows, lowered to a preferred size of the server's when it has them. */
  #target(rows: number): number {
    const wanted = Math.min(this.cap, rows);
    const preferred = this.server?.preferredBatchSizes ?? [];
    let best = 0;
    for (const size of preferred) if (size <= wanted && size > best) best = size;
    return best > 0 ? best : wanted;
  }

  /**
   * Decides from the server's statistics whether client-side filling helps (the `measure` rule for
   * a model with dynamic batching). It does when the server runs our requests together (at least
   * 1.2 requests per execution: Triton's batcher merges requests that queued behind each other,
   * so sending them as one request saves the per-request work on both sides and changes nothing
   * else), or when requests wait in its queue longer than its own batching delay plus a quarter of
   * an execution (its instances are busy). Then: fill. Back to eager once filling no longer forms
   * batches (under 2 rows per batch since the last sample): the load has gone.
   */
  serverSample(sample: ServerQueueSample): void {
    const batches = this.#batches;
    const rows = this.#rows;
    this.#batches = 0;
    this.#rows = 0;
    if (this.server === undefined || sample.requests <= 0 || sample.executions <= 0) return;
    // Triton adds an execution's compute time to each of its requests: per request, it is the
    // duration of the execution the request ran in.
    const queueUs = sample.queueUs / sample.requests;
    const executionUs = sample.computeUs / sample.requests;
    const merged = sample.requests / sample.executions >= MERGED_REQUESTS;
    const saturated = merged || queueUs > this.server.maxQueueDelayUs + SATURATION_SHARE * executionUs;
    if (saturated) {
      this.verdict = 'saturated';
      this.mode = 'fill';
    } else {
      this.verdict = 'idle';
      if (this.mode === 'fill' && (batches === 0 || rows / batches < 2)) this.mode = 'eager';
    }
  }
}
