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
/** Weight of each new sample in the round trip's mean deviation (Jacobson's estimator uses 1/4). */
const DEVIATION_WEIGHT = 0.25;
/** Mean deviations added to the mean for a round trip that is rarely exceeded (TCP's RTO uses 4). */
const DEVIATIONS = 4;
/** Round trips kept for their tail: the last 256 batches (about a second under load). */
const TAIL_SAMPLES = 256;
/**
 * The tail's share from the top: the 99th percentile (the 3rd longest of 256). Admission's promise is
 * read at the 99th percentile of the calls it admits; a margin sized by the 95th left one waiting
 * call in twenty behind a batch slower than the margin allowed for.
 */
const TAIL_SHARE = 0.01;
const RETURN_WEIGHT = 0.2;
/** Fraction of an expected row from which it counts as a whole one. */
const ROUND_UP_FROM = 0.2;
/** Return windows kept at once (one per recently answered batch). */
const MAX_WINDOWS = 8;
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
  #serviceDevMs = 0;
  #services = 0;
  /**
   * The last `TAIL_SAMPLES` round trips (a ring) and their 99th percentile, computed when admission
   * asks for it after a new answer (never on a lane without `maxQueueWaitMs`, at most once per batch).
   */
  readonly #recent = new Float64Array(TAIL_SAMPLES);
  #tailMs = 0;
  #tailStale = false;
  /** Share of an answered batch's rows that come back within one service time. */
  #returnShare = 0;
  #returnSamples = 0;
  /**
   * Open return windows, oldest first, one per batch answered within the last service time: rows
   * answered, rows arrived since (counted against the oldest window still short of its rows), and
   * when it closes. Batches in flight together are answered close together; one window each keeps
   * the first batch's callers counted when the second is answered.
   */
  readonly #windows: { rows: number; arrived: number; until: number }[] = [];
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

  /** Exponentially weighted mean deviation of the batch round trip; 0 until `serviceMs` is known. */
  get serviceDevMs(): number {
    return this.#services >= 3 ? this.#serviceDevMs : 0;
  }

  /** The 99th percentile of the last 256 round trips (of all so far while fewer); 0 until `serviceMs` is known. */
  get serviceTailMs(): number {
    if (this.#services < 3) return 0;
    if (this.#tailStale) {
      this.#tailMs = this.#tail();
      this.#tailStale = false;
    }
    return this.#tailMs;
  }

  /**
   * A round trip that batches rarely exceed, for admission by expected wait: the larger of the mean
   * plus four mean deviations (as TCP estimates its retransmission timeout) and the 99th percentile
   * of the last 256 round trips. The deviation follows steady variance; the percentile keeps the
   * tail a jittery machine shows (a descheduled process, a GC pause: one round trip in fifty
   * several times the median), which an average of deviations forgets within a few batches. 0
   * until `serviceMs` is known.
   */
  get serviceHighMs(): number {
    if (this.#services < 3) return 0;
    return Math.max(this.#serviceMs + DEVIATIONS * this.#serviceDevMs, this.serviceTailMs);
  }

  /** The learned share of answered rows that come back at once (0..1). */
  get returnShare(): number {
    return this.#returnShare;
  }

  /** A call of `rows` rows was queued. */
  arrived(now: number, rows: number): void {
    this.#expire(now);
    const windows = this.#windows;
    if (windows.length === 0) return;
    let open = windows[windows.length - 1] as { arrived: number };
    for (const window of windows) {
      if (window.arrived < window.rows) {
        open = window;
        break;
      }
    }
    open.arrived += rows;
  }

  /** A batch of `rows` rows was sent. */
  sent(rows: number): void {
    this.#batches += 1;
    this.#rows += rows;
  }

  /** A batch of `rows` rows came back after `serviceMs`; its callers may send again. */
  answered(now: number, rows: number, serviceMs: number): void {
    if (this.#services === 0) this.#serviceMs = serviceMs;
    else {
      const deviation = Math.abs(serviceMs - this.#serviceMs);
      this.#serviceDevMs = this.#serviceDevMs * (1 - DEVIATION_WEIGHT) + deviation * DEVIATION_WEIGHT;
      this.#serviceMs = this.#serviceMs * (1 - SERVICE_WEIGHT) + serviceMs * SERVICE_WEIGHT;
    }
    this.#recent[this.#services % TAIL_SAMPLES] = serviceMs;
    this.#services += 1;
    this.#tailStale = true;
    this.#expire(now);
    if (this.#windows.length >= MAX_WINDOWS) this.#close(this.#windows.shift());
    this.#windows.push({ rows, arrived: 0, until: now + Math.min(this.#serviceMs, this.maxQueueDelayMs) });
  }

  /** The 99th percentile of the kept round trips: the k-th longest, k = 1 % of them rounded up (3 of 256). */
  #tail(): number {
    const count = Math.min(this.#services, TAIL_SAMPLES);
    const rank = Math.max(1, Math.ceil(count * TAIL_SHARE));
    // The `rank` longest, kept sorted descending (rank is at most 3: a few comparisons per sample).
    const top: number[] = [];
    for (let index = 0; index < count; index++) {
      const value = this.#recent[index] as number;
      if (top.length === rank && value <= (top[rank - 1] as number)) continue;
      let at = top.length < rank ? top.length : rank - 1;
      while (at > 0 && (top[at - 1] as number) < value) {
        if (at < rank) top[at] = top[at - 1] as number;
        at -= 1;
      }
      top[at] = value;
    }
    return top[rank - 1] as number;
  }

  /** Closes the windows whose time is up, learning from each what share of its rows came back. */
  #expire(now: number): void {
    while (this.#windows.length > 0 && now > (this.#windows[0] as { until: number }).until) {
      this.#close(this.#windows.shift());
    }
  }

  #close(window: { rows: number; arrived: number } | undefined): void {
    if (window === undefined) return;
    const share = Math.min(1, window.arrived / window.rows);
    this.#returnShare =
      this.#returnSamples === 0 ? share : this.#returnShare * (1 - RETURN_WEIGHT) + share * RETURN_WEIGHT;
    this.#returnSamples += 1;
  }

  /** Rows still expected back from recently answered batches (0 once their windows have closed). */
  expectedRows(now: number): number {
    let expected = 0;
    for (const window of this.#windows) {
      if (now > window.until) continue;
      // Rounded up from 0.8 of a row: with share 0.999, floor(0.999 × 63) would leave one caller
      // behind every time, and that caller would wait for the next batch on its own.
      expected += Math.max(0, this.#expectedOf(window) - window.arrived);
    }
    return expected;
  }

  /** When the last open window closes. */
  #openUntil(now: number): number {
    let until = now;
    for (const window of this.#windows) until = Math.max(until, window.until);
    return until;
  }

  /**
   * Whether the batch at the head of the queue should wait: `undefined` to send it now, else the
   * time at which to decide again (arrivals and answers also trigger a new decision). `now` itself
   * means "at the end of this turn of the event loop": the rows expected back have arrived, but
   * the callers of an answered batch are still coming back (they were answered in this turn, and
   * a learned share under 1 does not count all of them). Sending at once would leave the rest
   * behind as a second, partial group, which then stays apart from the first for many batches
   * (the share recovers by a fifth per batch); at the end of the turn every caller that came back
   * at once is in the batch. `turnEnded`: this decision is that end-of-turn one (send then).
   */
  hold(
    now: number,
    queuedRows: number,
    oldestAt: number,
    inFlight: number,
    turnEnded = false,
  ): number | undefined {
    if (this.mode === 'eager' || queuedRows >= this.cap) return undefined;
    const latest = oldestAt + this.maxQueueDelayMs;
    if (now >= latest) return undefined;
    if (inFlight > 0) return latest;
    const expected = this.expectedRows(now);
    if (expected < 1) return turnEnded || !this.#returning(now) ? undefined : now;
    const target = this.#target(queuedRows + expected);
    if (queuedRows >= target) return undefined;
    // While callers are coming back, the rest of them usually arrive in this same turn: decide at
    // its end, and arm a timer only if the batch must still wait then (at high load it rarely
    // must, and a timer armed and cleared every batch still wakes the process when it falls due).
    return turnEnded || !this.#returning(now) ? Math.min(latest, this.#openUntil(now)) : now;
  }

  /**
   * Whether an open window's callers are coming back now: it expects some of them, some have
   * arrived, and not all of its rows have. Not with preferred batch sizes (a batch goes when it
   * reaches one, as Triton's batcher does).
   */
  #returning(now: number): boolean {
    if ((this.server?.preferredBatchSizes.length ?? 0) > 0) return false;
    for (const window of this.#windows) {
      if (now > window.until || window.arrived === 0 || window.arrived >= window.rows) continue;
      if (this.#expectedOf(window) >= 1) return true;
    }
    return false;
  }

  /** Rows a window expects back in all (its rows times the learned share, rounded up from 0.8). */
  #expectedOf(window: { rows: number }): number {
    return Math.floor(this.#returnShare * window.rows + ROUND_UP_FROM);
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
