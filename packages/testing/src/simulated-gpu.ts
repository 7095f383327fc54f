import { performance } from 'node:perf_hooks';
import { setLongTimeout } from '@infergate/core/internal/long-timer';
import { isAborted, type LazySignal } from './internal/call-context.js';
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

/**
 * Called when an execution takes the slot; `startedAt` (the monotonic clock of
 * `process.hrtime.bigint()`, in ns) when the call comes after that instant (a queued execution's
 * start runs after the previous one's answer has left).
 */
export type ExecutionStart = (startedAt?: bigint) => void;

interface Job {
  rows: number;
  onStart: ExecutionStart | undefined;
  resolve(): void;
  reject(error: Error): void;
  detach(): void;
}

/**
 * How an execution waits out its cost. Node's timers count whole milliseconds of libuv's floored
 * clock, and the poll that waits for one wakes up to a millisecond after its due millisecond (the
 * clock's fraction when the loop last read it): a 5.2 ms timer fires anywhere from about 4.3 to
 * 6.5 ms later. So an execution sleeps on a timer due at a whole millisecond at least
 * `1 + TIMER_MARGIN_MS` before its end (placed from the fraction of the monotonic clock libuv
 * floors), so it fires before the end, then sleeps out what is left (0.1–2.1 ms, measured on the
 * precise clock) but `SPIN_MS` in `Atomics.wait` on the main thread (a futex with a microsecond
 * timeout, no CPU), and reads the clock in a loop for the rest: a futex wakes 50 µs (the kernel's
 * timer slack) to a few hundred µs late, and the loop absorbs that (about 0.04 ms of CPU per
 * execution). The futex sleeps at most `MAX_BLOCK_MS` at a time, with a turn of the event loop
 * between, so other calls' I/O (or a client in the same process) waits that long at most. The
 * answer leaves in the same turn as the end. Measured at load 3.3 on the 2-core machine, 400
 * executions of 5.2 ms: the timer fires a median 1.02 ms before the end, and executions end a
 * median 0 and p90 0.02–0.06 ms late (a futex alone: 0.13 and 0.2–0.4 ms).
 *
 * What it replaced: a clock check on each turn of the event loop (`setImmediate`) for the last
 * millisecond or two, which burned 1–1.5 ms of the server's CPU per execution (on a 2-core machine,
 * the client's core) and, on an overloaded machine, lost the spinning server its CPU share so that
 * answers came late (it fell back to the timer alone there, up to a millisecond late). A sleeper
 * thread blocked in `Atomics.wait` (waking the main one) was tried too: its wake-up needs two threads
 * scheduled, and at load 11 executions ran 1.3–2.5 ms over their cost.
 */
const TIMER_MARGIN_MS = 0.1;
const SPIN_MS = 0.2;
const MAX_BLOCK_MS = 0.5;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` (sub-millisecond precision, no CPU). */
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** The fraction of the current millisecond of the monotonic clock libuv's timers floor. */
function clockFractionMs(): number {
  return Number(process.hrtime.bigint() % 1_000_000n) / 1e6;
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
 * `gpu.run` with the call's context instead of its signal: the signal is read (and the call's
 * controller made) only when the execution has to queue or sleep a tail delay. For the package's
 * own `simulated_gpu` model.
 */
export let runLazily: (
  gpu: SimulatedGpu,
  rows: number,
  context: LazySignal,
  onStart: ExecutionStart | undefined,
) => Promise<void>;

/**
 * One execution slot with GPU batch economics: executions run one at a time in arrival order, each
 * taking `baseMs + perRowMs * rows` of wall time. Batching many rows into one execution is
 * therefore much cheaper than running them one by one, as on a real GPU. No execution ends before
 * its cost, nor (on a machine that schedules the server at once) more than microseconds after it:
 * a timer, then a futex sleep for the last millisecond or so and a clock loop for its last 0.2 ms.
 * `stats().maxOverrunMs` shows how late the machine let one finish.
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
  run(rows: number, signal?: AbortSignal, onStart?: ExecutionStart): Promise<void> {
    return this.#run(rows, signal === undefined ? undefined : { signal }, onStart);
  }

  static {
    runLazily = (gpu, rows, context, onStart) => gpu.#run(rows, context, onStart);
  }

  async #run(
    rows: number,
    context: LazySignal | undefined,
    onStart: ExecutionStart | undefined,
  ): Promise<void> {
    await this.#execute(rows, context, onStart);
    if (this.tailProbability > 0 && this.#random() < this.tailProbability) {
      this.#stats.tailDelays += 1;
      await sleep(this.tailMs, context?.signal);
    }
  }

  #execute(
    rows: number,
    context: LazySignal | undefined,
    onStart: ExecutionStart | undefined,
  ): Promise<void> {
    if (context !== undefined && isAborted(context)) return Promise.reject(cancelled());
    if (this.#running === 0 && this.#queue.length === 0) {
      // The slot is free: the execution starts now and cannot be cancelled, so no abort listener.
      return new Promise<void>((resolve, reject) => {
        this.#start({ rows, onStart, resolve, reject, detach: noop });
      });
    }
    const signal = context?.signal;
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

  /**
   * The slot passes from an execution that just ended (at `endedAt`) to the next one queued: the
   * next one's clock starts at that instant, as a GPU runs the next kernel at once, but its start
   * (its `onStart`, told that instant, the abort listener's removal, the timer) runs only after the
   * event loop's current turn, so that the ended execution's answer, which leaves in that turn, does
   * not wait for it. The slot is held meanwhile: calls arriving then queue behind.
   */
  #handOff(endedAt: number): void {
    const job = this.#queue.shift();
    if (job === undefined) return;
    const startedAt = process.hrtime.bigint();
    this.#running += 1;
    setImmediate(() => {
      job.detach();
      job.onStart?.(startedAt);
      this.#start(job, endedAt);
    });
  }

  /**
   * `startedAt`: when the slot passed to it (`#handOff`, which already ran its `onStart` and counted
   * it as running).
   */
  #start(job: Job, startedAt?: number): void {
    if (startedAt === undefined) {
      job.onStart?.();
      this.#running += 1;
    }
    const stats = this.#stats;
    stats.maxConcurrent = Math.max(stats.maxConcurrent, this.#running);
    stats.executions += 1;
    stats.rows += job.rows;
    stats.maxBatchSize = Math.max(stats.maxBatchSize, job.rows);
    const duration = this.costMs(job.rows);
    stats.busyMs += duration;
    const started = startedAt ?? performance.now();
    const end = started + duration;
    const finish = () => {
      let now = performance.now();
      let remaining = end - now;
      // Due at the last whole millisecond of libuv's clock that leaves a millisecond (its wake-up
      // lateness) and the margin before the end.
      const wholeMs = Math.floor(remaining + clockFractionMs() - 1 - TIMER_MARGIN_MS);
      if (wholeMs >= 1) {
        setLongTimeout(finish, wholeMs);
        return;
      }
      if (remaining > SPIN_MS) {
        // At most MAX_BLOCK_MS at a time, then a turn of the event loop: other calls' I/O (and a
        // client in the same process) waits that long at most.
        sleepSync(Math.min(remaining - SPIN_MS, MAX_BLOCK_MS));
        now = performance.now();
        remaining = end - now;
        if (remaining > SPIN_MS) {
          setImmediate(finish);
          return;
        }
      }
      while (remaining > 0) {
        now = performance.now();
        remaining = end - now;
      }
      this.#finished(now - started, -remaining);
      this.#running -= 1;
      job.resolve();
      this.#handOff(now);
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
