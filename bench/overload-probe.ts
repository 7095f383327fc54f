// What the overload arm's slowest calls spent their time on, for the batcher suite's overload case
// and bench/batcher-overload.ts. Per call, on this process's monotonic clock: when the open-loop
// generator scheduled it, when it was made, when the batcher handed its batch to the transport,
// when the batch's answer came back, and when the caller had it. Each call's rows carry its id as
// their input value, so a wrapped transport finds the calls in a batch. Around the window: the
// client's GC pauses (perf_hooks 'gc' entries), its event-loop delay, and the model's compute time
// per execution from the statistics RPC (the server's lateness against the nominal cost).
import {
  type IntervalHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
  performance,
} from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { type InferRequest, type InferTransport, type InputTensor, sleep } from '@infergate/core';
import { percentile, round } from './lib.js';

interface CallTimes {
  due: number;
  made: number;
  batchSent: number;
  batchAnswered: number;
  batchRows: number;
  batchBehind: number;
  answered: number;
}

/** A call's state in the records. */
const PENDING = 0;
const ANSWERED = 1;
const REFUSED = 2;
const FAILED = 3;

/** What one open-loop window saw (the answered calls' latencies in the order the calls were made). */
export interface OpenLoopSample {
  /** From the scheduled send time, ms. */
  latencies: number[];
  /** From the moment the call was actually made, ms (the generator's own lag left out). */
  fromSend: number[];
  completed: number;
  /** Calls refused with QUEUE_FULL (counted, not timed). */
  refused: number;
  /** Any other failure (the first one kept): a run with one fails. */
  failed: number;
  firstError?: unknown;
  /** From the first send to the last answer, ms. */
  elapsedMs: number;
}

/** Per call, FP32 values in the request (one row of 16); the first carries the call's id. */
const COLUMNS = 16;
/**
 * Slots of the input ring: a call's input is a view of one slot, which is reused this many calls
 * later (about 6 s at 10k calls/s; a call's rows are read when its batch is sent, within
 * `maxQueueDelayMs` of the call).
 */
const RING = 65_536;
const SHAPE: readonly number[] = Object.freeze([1, COLUMNS]);

const oldSpaceMiB = () =>
  round(
    (getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0) /
      2 ** 20,
    1,
  );
const gcKinds: Record<number, string> = {
  1: 'scavenge',
  2: 'minorMarkCompact',
  4: 'markCompact',
  8: 'incremental',
  16: 'weakCallbacks',
};
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const ms = (value: number) => round(value, 3);

/** The ids of the calls whose rows are in `request` (each row's first FP32 value). */
function callIds(request: InferRequest): number[] {
  const input = request.inputs[0] as { raw?: Uint8Array; data?: ArrayLike<number> } | undefined;
  const ids: number[] = [];
  if (input?.raw !== undefined) {
    const raw = input.raw;
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let offset = 0; offset + 4 <= raw.byteLength; offset += 4 * COLUMNS)
      ids.push(view.getFloat32(offset, true));
  } else if (input?.data !== undefined) {
    for (let index = 0; index < input.data.length; index += COLUMNS) ids.push(Number(input.data[index]));
  }
  return ids;
}

/**
 * The overload arm's open-loop generator and recorder. It must not perturb what it measures: under
 * 4× overload it makes about 10,000 calls a second, three in four refused at once, so what it
 * allocates per call is a large share of the process's garbage, and every scavenge is a chance for
 * a pause (docs/benchmarks/batcher-log.md, "GC under overload"). So the records are
 * preallocated typed arrays indexed by call id (nothing kept per call on the heap), a call's input
 * is a view of a preallocated ring, and the generator keeps a count of the calls outstanding instead
 * of a set of promises. Per call it allocates the inputs' two small objects and the view, and one
 * async function's frame for the call's outcome.
 */
export class OverloadProbe {
  #capacity = 1 << 17;
  #due = new Float64Array(this.#capacity);
  #made = new Float64Array(this.#capacity);
  #batchSent = new Float64Array(this.#capacity);
  #batchAnswered = new Float64Array(this.#capacity);
  #answered = new Float64Array(this.#capacity);
  #batchRows = new Uint8Array(this.#capacity);
  /** Batches already in flight when this call's batch was sent (0: the model was idle here). */
  #batchBehind = new Uint8Array(this.#capacity);
  #state = new Uint8Array(this.#capacity);
  /** Calls made so far (over every window); a call's id is its index. */
  #count = 0;
  readonly #ring = new Float32Array(RING * COLUMNS);
  /** Batches sent through the wrapped transport and not yet answered. */
  #outstanding = 0;
  /** Calls made in the current window and not yet settled, and who waits for them. */
  #pending = 0;
  #drained: (() => void) | undefined;
  #firstError: unknown;
  #failed = 0;
  readonly #gc: { start: number; duration: number; kind: number }[] = [];
  #observer: PerformanceObserver | undefined;
  /** The measured windows: from start() to stop(), each with its own event-loop delay histogram. */
  readonly #windows: {
    start: number;
    end: number;
    delay: IntervalHistogram;
    cpu: NodeJS.CpuUsage;
    cpuMs: number;
    /** Old space in use (MiB) at the window's start and end: what survived into it meanwhile. */
    oldSpaceMiB: [number, number];
  }[] = [];

  /** Wraps the batcher's transport: records when each batch left and came back, per member call. */
  transport(inner: InferTransport): InferTransport {
    return {
      infer: (request, options) => {
        const sent = performance.now();
        // Read when the batch leaves (the input ring's slots are reused later).
        const ids = callIds(request);
        const behind = Math.min(255, this.#outstanding++);
        for (const id of ids) {
          if (id >= this.#count) continue;
          this.#batchSent[id] = sent;
          this.#batchRows[id] = ids.length;
          this.#batchBehind[id] = behind;
        }
        return inner.infer(request, options).then(
          (response) => {
            this.#outstanding -= 1;
            const back = performance.now();
            for (const id of ids) if (id < this.#count) this.#batchAnswered[id] = back;
            return response;
          },
          (error: unknown) => {
            this.#outstanding -= 1;
            throw error;
          },
        );
      },
      stream: (request, options) => inner.stream(request, options),
    };
  }

  /**
   * Poisson arrivals at `rate`/s for `windowMs` (the scheme of `infergate perf`'s rate window, which
   * the overload arm used before: a send due within 1 ms goes at once, the generator sleeps
   * otherwise, and when it is behind it yields to answers every 64 sends; latency counts from the
   * scheduled time). `send` makes one call with the given inputs; a QUEUE_FULL refusal is counted,
   * any other failure is kept (the run should fail). Records every call for `report`.
   */
  async openLoop(
    send: (inputs: InputTensor[]) => Promise<unknown>,
    rate: number,
    windowMs: number,
  ): Promise<OpenLoopSample> {
    const first = this.#count;
    this.#failed = 0;
    this.#firstError = undefined;
    this.start();
    const started = performance.now();
    const end = started + windowMs;
    let scheduled = started;
    let sentWithoutWaiting = 0;
    while (scheduled < end) {
      const wait = scheduled - performance.now();
      if (wait >= 1) {
        sentWithoutWaiting = 0;
        await sleep(Math.floor(wait));
      } else if (++sentWithoutWaiting % 64 === 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.#pending += 1;
      void this.#one(send, this.#record(scheduled));
      scheduled += (-Math.log(1 - Math.random()) * 1000) / rate;
    }
    if (this.#pending > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    const elapsedMs = performance.now() - started;
    this.stop();
    const sample: OpenLoopSample = {
      latencies: [],
      fromSend: [],
      completed: 0,
      refused: 0,
      failed: this.#failed,
      elapsedMs,
      ...(this.#firstError !== undefined ? { firstError: this.#firstError } : {}),
    };
    for (let id = first; id < this.#count; id++) {
      const state = this.#state[id];
      if (state === ANSWERED) {
        sample.completed += 1;
        sample.latencies.push((this.#answered[id] as number) - (this.#due[id] as number));
        sample.fromSend.push((this.#answered[id] as number) - (this.#made[id] as number));
      } else if (state === REFUSED) sample.refused += 1;
    }
    return sample;
  }

  /** One call and its outcome in the records. */
  async #one(send: (inputs: InputTensor[]) => Promise<unknown>, id: number): Promise<void> {
    try {
      await send(this.#inputs(id));
      this.#answered[id] = performance.now();
      this.#state[id] = ANSWERED;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'QUEUE_FULL') this.#state[id] = REFUSED;
      else {
        this.#state[id] = FAILED;
        this.#failed += 1;
        this.#firstError ??= error;
      }
    }
    if (--this.#pending === 0 && this.#drained !== undefined) {
      const drained = this.#drained;
      this.#drained = undefined;
      drained();
    }
  }

  /** A new call's record: its id. */
  #record(due: number): number {
    if (this.#count === this.#capacity) this.#grow();
    const id = this.#count++;
    this.#due[id] = due;
    this.#made[id] = performance.now();
    this.#state[id] = PENDING;
    return id;
  }

  /** The call's inputs: a view of its ring slot, the id in every value (`callIds` reads the first). */
  #inputs(id: number): InputTensor[] {
    const offset = (id % RING) * COLUMNS;
    const data = this.#ring.subarray(offset, offset + COLUMNS);
    data.fill(id);
    return [{ name: 'INPUT0', datatype: 'FP32', shape: SHAPE as number[], data }];
  }

  #grow(): void {
    const capacity = this.#capacity * 2;
    const float = (from: Float64Array) => {
      const to = new Float64Array(capacity);
      to.set(from);
      return to;
    };
    const byte = (from: Uint8Array) => {
      const to = new Uint8Array(capacity);
      to.set(from);
      return to;
    };
    this.#due = float(this.#due);
    this.#made = float(this.#made);
    this.#batchSent = float(this.#batchSent);
    this.#batchAnswered = float(this.#batchAnswered);
    this.#answered = float(this.#answered);
    this.#batchRows = byte(this.#batchRows);
    this.#batchBehind = byte(this.#batchBehind);
    this.#state = byte(this.#state);
    this.#capacity = capacity;
  }

  /** Starts a measured window: GC pauses and the event loop's delay are recorded until `stop`. */
  start(): void {
    if (this.#observer === undefined) {
      this.#observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          const detail = (entry as { detail?: { kind?: number } }).detail;
          this.#gc.push({ start: entry.startTime, duration: entry.duration, kind: detail?.kind ?? 0 });
        }
      });
      this.#observer.observe({ entryTypes: ['gc'] });
    }
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    this.#windows.push({
      start: performance.now(),
      end: Number.POSITIVE_INFINITY,
      delay,
      cpu: process.cpuUsage(),
      cpuMs: 0,
      oldSpaceMiB: [oldSpaceMiB(), 0],
    });
  }

  stop(): void {
    const window = this.#windows.at(-1);
    if (window === undefined || window.end !== Number.POSITIVE_INFINITY) return;
    window.end = performance.now();
    window.delay.disable();
    const used = process.cpuUsage(window.cpu);
    window.cpuMs = (used.user + used.system) / 1000;
    window.oldSpaceMiB[1] = oldSpaceMiB();
  }

  /**
   * The report: each segment's p50 over all answered calls and over the slowest 1 % (latency from
   * the due time at or above its p99), the GC pauses (count, total, max; and how many of the
   * slowest calls had a pause inside them), the event-loop delay, and `computePerExecutionMs` when
   * given.
   */
  report(extra: Record<string, unknown> = {}): Record<string, unknown> {
    this.#observer?.disconnect();
    // The records as objects, built here (after the windows), for the answered calls.
    const answered: CallTimes[] = [];
    for (let id = 0; id < this.#count; id++) {
      if (this.#state[id] !== ANSWERED || this.#batchSent[id] === 0) continue;
      answered.push({
        due: this.#due[id] as number,
        made: this.#made[id] as number,
        batchSent: this.#batchSent[id] as number,
        batchAnswered: this.#batchAnswered[id] as number,
        batchRows: this.#batchRows[id] as number,
        batchBehind: this.#batchBehind[id] as number,
        answered: this.#answered[id] as number,
      });
    }
    const latency = (call: CallTimes) => call.answered - call.due;
    const p99 = percentile(sorted(answered.map(latency)), 99);
    const slow = answered.filter((call) => latency(call) >= p99);
    const segments = (calls: CallTimes[]) => ({
      calls: calls.length,
      latency: ms(percentile(sorted(calls.map(latency)), 50)),
      lag: ms(percentile(sorted(calls.map((call) => call.made - call.due)), 50)),
      // Share of the calls made 5 ms or more after their due time (the generator behind schedule).
      lateShare: round(
        calls.filter((call) => call.made - call.due >= 5).length / Math.max(1, calls.length),
        3,
      ),
      queued: ms(percentile(sorted(calls.map((call) => call.batchSent - call.made)), 50)),
      roundTrip: ms(percentile(sorted(calls.map((call) => call.batchAnswered - call.batchSent)), 50)),
      handOut: ms(percentile(sorted(calls.map((call) => call.answered - call.batchAnswered)), 50)),
      batchRows: percentile(sorted(calls.map((call) => call.batchRows)), 50),
      // Share of the calls whose batch was sent while another was in flight (it queued in the server).
      behindShare: round(calls.filter((call) => call.batchBehind > 0).length / Math.max(1, calls.length), 3),
      // Mean of each segment too: the slowest calls' tail is often one long segment.
      meanLag: ms(calls.reduce((sum, call) => sum + call.made - call.due, 0) / Math.max(1, calls.length)),
      meanQueued: ms(
        calls.reduce((sum, call) => sum + call.batchSent - call.made, 0) / Math.max(1, calls.length),
      ),
      meanRoundTrip: ms(
        calls.reduce((sum, call) => sum + call.batchAnswered - call.batchSent, 0) / Math.max(1, calls.length),
      ),
      meanHandOut: ms(
        calls.reduce((sum, call) => sum + call.answered - call.batchAnswered, 0) / Math.max(1, calls.length),
      ),
    });
    const windows = this.#windows;
    const pauses = this.#gc.filter((entry) =>
      windows.some((window) => entry.start >= window.start && entry.start < window.end),
    );
    const withPause = slow.filter((call) =>
      pauses.some((entry) => entry.start + entry.duration > call.due && entry.start < call.answered),
    ).length;
    const durations = sorted(pauses.map((entry) => entry.duration));
    return {
      all: segments(answered),
      slowest1pct: segments(slow),
      gc: {
        pauses: pauses.length,
        totalMs: ms(durations.reduce((sum, value) => sum + value, 0)),
        maxMs: ms(durations.at(-1) ?? 0),
        p99Ms: ms(percentile(durations, 99) || 0),
        // Major (mark-compact, kind 2 / 4) pauses.
        major: pauses.filter((entry) => entry.kind === 2 || entry.kind === 4).length,
        slowCallsWithAPause: withPause,
        // Per kind (perf_hooks: 1 scavenge, 4 mark-compact, 8 incremental marking step, 16 weak
        // callbacks): count, total and longest, and every pause of 4 ms or more with its kind.
        byKind: Object.fromEntries(
          [...new Set(pauses.map((entry) => entry.kind))].map((kind) => {
            const of = pauses.filter((entry) => entry.kind === kind).map((entry) => entry.duration);
            return [
              gcKinds[kind] ?? String(kind),
              {
                count: of.length,
                totalMs: ms(of.reduce((sum, value) => sum + value, 0)),
                maxMs: ms(Math.max(...of)),
              },
            ];
          }),
        ),
        long: pauses
          .filter((entry) => entry.duration >= 4)
          .map((entry) => `${gcKinds[entry.kind] ?? entry.kind} ${ms(entry.duration)}`),
      },
      // Per window: this process's CPU time ÷ the window's wall time (1 = a whole core: the generator
      // cannot send faster), and the event loop's delay beyond its 1 ms timer (a stall of the process shows as max).
      eventLoopDelay: windows.map(({ delay, cpuMs, start, end, oldSpaceMiB }) => ({
        cpuShare: round(cpuMs / (end - start), 3),
        oldSpaceMiB,
        p50Ms: ms(delay.percentile(50) / 1e6),
        p99Ms: ms(delay.percentile(99) / 1e6),
        maxMs: ms(delay.max / 1e6),
      })),
      ...extra,
    };
  }
}
