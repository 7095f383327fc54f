import { status } from '@grpc/grpc-js';
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
  /** Total simulated execution time, in ms. */
  busyMs: number;
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
 * One execution slot with GPU batch economics: executions run one at a time in arrival order, each
 * taking `baseMs + perRowMs * rows` of wall time (a timer, not a busy loop). Batching many rows
 * into one execution is therefore much cheaper than running them one by one, as on a real GPU.
 */
export class SimulatedGpu {
  readonly baseMs: number;
  readonly perRowMs: number;
  readonly tailProbability: number;
  readonly tailMs: number;
  readonly #random: () => number;
  readonly #queue: Job[] = [];
  #running = 0;
  #stats: SimulatedGpuStats = {
    executions: 0,
    rows: 0,
    maxBatchSize: 0,
    queued: 0,
    maxConcurrent: 0,
    busyMs: 0,
    tailDelays: 0,
  };

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
    job.onStart?.();
    this.#running += 1;
    const stats = this.#stats;
    stats.maxConcurrent = Math.max(stats.maxConcurrent, this.#running);
    stats.executions += 1;
    stats.rows += job.rows;
    stats.maxBatchSize = Math.max(stats.maxBatchSize, job.rows);
    const duration = this.costMs(job.rows);
    stats.busyMs += duration;
    setTimeout(() => {
      this.#running -= 1;
      job.resolve();
      this.#pump();
    }, duration);
  }

  stats(): SimulatedGpuStats {
    return { ...this.#stats, queued: this.#queue.length };
  }

  resetStats(): void {
    this.#stats = {
      executions: 0,
      rows: 0,
      maxBatchSize: 0,
      queued: 0,
      maxConcurrent: this.#running,
      busyMs: 0,
      tailDelays: 0,
    };
  }
}

function cancelled(): RpcError {
  return new RpcError(status.CANCELLED, 'cancelled while queued for the simulated GPU');
}
