import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { status } from './internal/grpc-status.js';
import { sleep } from './internal/sleep.js';
import { RpcError } from './rpc-error.js';

export interface SimulatedGpuOptions {
  /** Fixed cost of one execution (kernel launch, transfer), in ms. @default 2 */
  baseMs?: number;
  /** Cost per batch row, in ms. @default 0.05 */
  perRowMs?: number;
  /**
   * A heavy tail: this share of executions answers `tailMs` late. The delay comes after the
   * execution, outside the slot (a GC pause, a congested link): the call is slow, the GPU is not,
   * so the calls behind it are not held up. For hedging benchmarks. @default 0
   */
  tailProbability?: number;
  /** How late a tail answer is, in ms. @default 0 */
  tailMs?: number;
  /** Random source for the tail (tests). @default Math.random */
  random?: () => number;
}

export interface SimulatedGpuStats {
  executions: number;
  rows: number;
  /** Largest batch one execution carried. */
  maxBatchSize: number;
  /** Executions waiting for the slot right now. */
  queued: number;
  /** Most executions that ever held the slot at once (1 unless the slot is broken). */
  maxConcurrent: number;
  /** Total simulated execution time (the sum of each execution's `costMs`), in ms. */
  busyMs: number;
  /** Wall time the slot was actually held, start to end of each execution, summed, in ms. */
  wallMs: number;
  /**
   * Least and most that one execution held the slot beyond its cost, in ms: never below 0 (no
   * execution ends early); the most shows how late the event loop let one finish. 0 before any.
   */
  minOverrunMs: number;
  maxOverrunMs: number;
  /** Executions that answered late (`tailProbability`). */
  tailDelays: number;
}

interface Job {
  rows: number;
  onStart: (() => void) | undefined;
  resolve(): void;
  reject(error: Error): void;
  detach(): void;
}

/**
 * How an execution waits out its cost. Node's timers count whole milliseconds from a floored clock:
 * a 5.2 ms timer fires anywhere from about 4.3 to 6.5 ms later. So an execution sleeps on a timer
 * until about `FINISH_WINDOW_MS` before its end, then checks the precise clock on each turn of the
 * event loop (`setImmediate`, which still serves I/O) until the end: it ends at its cost, for about
 * 0.5–1 ms of CPU per execution (at most 2).
 *
 * That only pays while the machine has a core to spare. On an overloaded one (a 1-minute load
 * average of 1.5× the core count or more: a quiet benchmark run of two busy processes reads 1.3–2.8
 * on the 2-core machine, five engineers at work 6–15) the scheduler takes the spinning server's CPU
 * share away, and its answers come late (unbatched c1 on the loaded 2-core machine: 124 calls/s
 * with the spin, 214 with the sleeper thread below, at the same load). There the timer aims at the
 * end itself, and only an early firing (a fraction of a millisecond) is waited out on the clock,
 * so no execution ends before its cost either way.
 *
 * A sleeper thread blocked in `Atomics.wait` (a microsecond timeout) was tried too: its wake-up
 * needs two threads scheduled, and at load 11 executions ran 1.3–2.5 ms over their cost.
 */
const FINISH_WINDOW_MS = 1;
const LOAD_CHECK_MS = 1000;
let spareCoreCheckedAt = Number.NEGATIVE_INFINITY;
let spareCore = true;

/** Whether the machine has a core to spare (the 1-minute load average, read once a second at most). */
function hasSpareCore(now: number): boolean {
  if (now - spareCoreCheckedAt >= LOAD_CHECK_MS) {
    spareCoreCheckedAt = now;
    spareCore = (loadavg()[0] as number) < 1.5 * availableParallelism();
  }
  return spareCore;
}

function emptyStats(maxConcurrent: number): SimulatedGpuStats {
  return {
    executions: 0,
    rows: 0,
    maxBatchSize: 0,
    queued: 0,
    maxConcurrent,
    busyMs: 0,
    wallMs: 0,
    minOverrunMs: 0,
    maxOverrunMs: 0,
    tailDelays: 0,
  };
}

/**
 * One execution slot with GPU batch economics: executions run one at a time in arrival order, each
 * taking `baseMs + perRowMs * rows` of wall time. Batching many rows into one execution is
 * therefore much cheaper than running them one by one, as on a real GPU. No execution ends before
 * its cost. On a machine with a core to spare (load average under 1.5× the cores) none ends more
 * than microseconds after it: a timer, then a clock check on each event-loop turn for the last
 * millisecond. On an overloaded one the timer alone (a spinning server loses its CPU share there),
 * so up to about a millisecond late. `stats().maxOverrunMs` shows how late the machine let one finish.
 */
export class SimulatedGpu {
  readonly baseMs: number;
  readonly perRowMs: number;
  readonly tailProbability: number;
  readonly tailMs: number;
  readonly #random: () => number;
  readonly #queue: Job[] = [];
  #running = 0;
  /** Executions that ended since the stats were last reset (for `minOverrunMs`). */
  #ended = 0;
  #stats: SimulatedGpuStats = emptyStats(0);

  constructor(options: SimulatedGpuOptions = {}) {
    this.baseMs = options.baseMs ?? 2;
    this.perRowMs = options.perRowMs ?? 0.05;
    this.tailProbability = options.tailProbability ?? 0;
    this.tailMs = options.tailMs ?? 0;
    this.#random = options.random ?? Math.random;
    if (!(this.baseMs >= 0) || !(this.perRowMs >= 0) || !(this.tailMs >= 0))
      throw new RangeError('simulated GPU costs must be non-negative');
    if (!(this.tailProbability >= 0 && this.tailProbability <= 1))
      throw new RangeError('tailProbability must be within [0, 1]');
  }

  /** How long an execution of `rows` rows takes, in ms. */
  costMs(rows: number): number {
    return this.baseMs + this.perRowMs * rows;
  }

  /**
   * Waits for the slot, then holds it for the execution's duration. Aborting while queued leaves
   * the queue (CANCELLED); an execution that has started runs to the end, as GPU work would. A tail
   * delay after it ends early on an abort.
   */
  async run(rows: number, signal?: AbortSignal, onStart?: () => void): Promise<void> {
    await this.#execute(rows, signal, onStart);
    if (this.tailProbability > 0 && this.#random() < this.tailProbability) {
      this.#stats.tailDelays += 1;
      await sleep(this.tailMs, signal);
    }
  }

  #execute(rows: number, signal: AbortSignal | undefined, onStart: (() => void) | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.#running === 0 && this.#queue.length === 0) {
      // The slot is free: the execution starts now and cannot be cancelled, so no abort listener.
      return new Promise<void>((resolve, reject) => {
        this.#start({ rows, onStart, resolve, reject, detach: noop });
      });
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#queue.indexOf(job);
        if (index === -1) return;
        this.#queue.splice(index, 1);
        reject(cancelled());
      };
      const job: Job = {
        rows,
        onStart,
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(job);
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#running > 0) return;
    const job = this.#queue.shift();
    if (job === undefined) return;
    job.detach();
    this.#start(job);
  }

  #start(job: Job): void {
    job.onStart?.();
    this.#running += 1;
    const stats = this.#stats;
    stats.maxConcurrent = Math.max(stats.maxConcurrent, this.#running);
    stats.executions += 1;
    stats.rows += job.rows;
    stats.maxBatchSize = Math.max(stats.maxBatchSize, job.rows);
    const duration = this.costMs(job.rows);
    stats.busyMs += duration;
    const started = performance.now();
    const end = started + duration;
    const window = hasSpareCore(started) ? FINISH_WINDOW_MS : 0;
    const finish = () => {
      const now = performance.now();
      const remaining = end - now;
      // A timer shorter than 1 ms is a 1 ms timer, so the timer only serves while that is left over.
      if (remaining >= window + 1) {
        setTimeout(finish, remaining - window);
        return;
      }
      if (remaining > 0) {
        setImmediate(finish);
        return;
      }
      this.#finished(now - started, -remaining);
      this.#running -= 1;
      job.resolve();
      this.#pump();
    };
    finish();
  }

  #finished(wallMs: number, overrunMs: number): void {
    const stats = this.#stats;
    stats.wallMs += wallMs;
    this.#ended += 1;
    stats.minOverrunMs = this.#ended === 1 ? overrunMs : Math.min(stats.minOverrunMs, overrunMs);
    stats.maxOverrunMs = Math.max(stats.maxOverrunMs, overrunMs);
  }

  stats(): SimulatedGpuStats {
    return { ...this.#stats, queued: this.#queue.length };
  }

  resetStats(): void {
    this.#stats = emptyStats(this.#running);
    this.#ended = 0;
  }
}

function noop(): void {}

function cancelled(): RpcError {
  return new RpcError(status.CANCELLED, 'cancelled while queued for the simulated GPU');
}
