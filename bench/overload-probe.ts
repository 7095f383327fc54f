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
import type { InferRequest, InferTransport, InputTensor } from '@infergate/core';
import { percentile, round } from './lib.js';

interface CallTimes {
  due: number;
  made: number;
  batchSent: number;
  batchAnswered: number;
  batchRows: number;
  /** Batches already in flight when this call's batch was sent (0: the model was idle here). */
  batchBehind: number;
  answered: number;
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const ms = (value: number) => round(value, 3);

/** The ids of the calls whose rows are in `request` (each row's first FP32 value). */
function callIds(request: InferRequest): number[] {
  const input = request.inputs[0] as { raw?: Uint8Array; data?: ArrayLike<number> } | undefined;
  const ids: number[] = [];
  if (input?.raw !== undefined) {
    const raw = input.raw;
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let offset = 0; offset + 4 <= raw.byteLength; offset += 64) ids.push(view.getFloat32(offset, true));
  } else if (input?.data !== undefined) {
    for (let index = 0; index < input.data.length; index += 16) ids.push(Number(input.data[index]));
  }
  return ids;
}

export class OverloadProbe {
  readonly #calls = new Map<number, CallTimes>();
  #nextId = 1;
  /** Batches sent through the wrapped transport and not yet answered. */
  #outstanding = 0;
  /** The current window's start, and the sum of the gaps drawn so far (the next call's due time). */
  #started = 0;
  #dueAfter = 0;
  #made = 0;
  readonly #gc: { start: number; duration: number; kind: number }[] = [];
  #observer: PerformanceObserver | undefined;
  /** The measured windows: from start() to stop(), each with its own event-loop delay histogram. */
  readonly #windows: {
    start: number;
    end: number;
    delay: IntervalHistogram;
    cpu: NodeJS.CpuUsage;
    cpuMs: number;
  }[] = [];

  /** Wraps the batcher's transport: records when each batch left and came back, per member call. */
  transport(inner: InferTransport): InferTransport {
    return {
      infer: (request, options) => {
        const sent = performance.now();
        const ids = callIds(request);
        const behind = this.#outstanding++;
        return inner.infer(request, options).then(
          (response) => {
            this.#outstanding -= 1;
            const back = performance.now();
            for (const id of ids) {
              const call = this.#calls.get(id);
              if (call === undefined) continue;
              call.batchSent = sent;
              call.batchAnswered = back;
              call.batchRows = ids.length;
              call.batchBehind = behind;
            }
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

  /** The generator's random source for one window (Poisson gaps recorded to know each call's due time). */
  random(rate: number): () => number {
    this.#dueAfter = 0;
    this.#made = 0;
    return () => {
      const value = Math.random();
      this.#dueAfter += (-Math.log(1 - value) * 1000) / rate;
      return value;
    };
  }

  /**
   * A call's inputs with its id, and its record: the window's first call is made at the window's
   * start (due then), each next one a drawn gap later (the generator draws the gap after each send).
   */
  call(): { id: number; inputs: InputTensor[]; done: () => void; refused: () => void } {
    const made = performance.now();
    if (this.#made === 0) this.#started = made;
    const due = this.#started + this.#dueAfter;
    this.#made += 1;
    const id = this.#nextId++ % 16_000_000;
    const times: CallTimes = {
      due,
      made,
      batchSent: 0,
      batchAnswered: 0,
      batchRows: 0,
      batchBehind: 0,
      answered: 0,
    };
    this.#calls.set(id, times);
    return {
      id,
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(id) }],
      done: () => {
        times.answered = performance.now();
      },
      // A refused call leaves no record: under 4× overload three calls in four are refused, and
      // keeping them (about 10k a second) grew this process's heap and its GC pauses, the very
      // stalls the probe is there to see.
      refused: () => {
        this.#calls.delete(id);
      },
    };
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
    });
  }

  stop(): void {
    const window = this.#windows.at(-1);
    if (window === undefined || window.end !== Number.POSITIVE_INFINITY) return;
    window.end = performance.now();
    window.delay.disable();
    const used = process.cpuUsage(window.cpu);
    window.cpuMs = (used.user + used.system) / 1000;
  }

  /**
   * The report: each segment's p50 over all answered calls and over the slowest 1 % (latency from
   * the due time at or above its p99), the GC pauses (count, total, max; and how many of the
   * slowest calls had a pause inside them), the event-loop delay, and `computePerExecutionMs` when
   * given.
   */
  report(extra: Record<string, unknown> = {}): Record<string, unknown> {
    this.#observer?.disconnect();
    const answered = [...this.#calls.values()].filter((call) => call.answered > 0 && call.batchSent > 0);
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
      },
      // Per window: this process's CPU time ÷ the window's wall time (1 = a whole core: the generator
      // cannot send faster), and the event loop's delay beyond its 1 ms timer (a stall of the process shows as max).
      eventLoopDelay: windows.map(({ delay, cpuMs, start, end }) => ({
        cpuShare: round(cpuMs / (end - start), 3),
        p50Ms: ms(delay.percentile(50) / 1e6),
        p99Ms: ms(delay.percentile(99) / 1e6),
        maxMs: ms(delay.max / 1e6),
      })),
      ...extra,
    };
  }
}
