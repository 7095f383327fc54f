import { performance } from 'node:perf_hooks';
import { status } from '@grpc/grpc-js';
import { wakeAt } from './internal/precise-wake.js';
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
 * therefore much cheaper than running them one by one, as on a real GPU. The wait is not a Node
 * timer: those count whole milliseconds from a floored clock, so a 5.2 ms timer fires anywhere from
 * about 4.3 to 6.5 ms later. A sleeper thread wakes the execution once its cost has passed
 * (`wakeAt`), never before it, and without a busy loop: `stats().maxOverrunMs` shows how late the
 * machine let one finish. (A busy loop for the last millisecond was tried: precise on an idle
 * machine, but on the loaded 2-core one the spinning server lost its CPU share to the scheduler and
 * answered unbatched calls 4× slower.)
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
    const finish = () => {
      const now = performance.now();
      // Both clocks are the same monotonic one; this only guards the rounding between them.
      if (now < end) {
        setImmediate(finish);
        return;
      }
      this.#finished(now - started, now - end);
      this.#running -= 1;
      job.resolve();
      this.#pump();
    };
    wakeAt(process.hrtime.bigint() + BigInt(Math.ceil(duration * 1e6)), finish);
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
