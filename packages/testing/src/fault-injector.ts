import { type StatusCode, statusNumber } from './rpc-error.js';

/** What to do to a model's next inference requests. */
export interface Fault {
  /** Answer with this gRPC status (number or name, e.g. 'UNAVAILABLE'). Absent: no error. */
  code?: StatusCode;
  /** @default "fault injected for model '<name>'" */
  message?: string;
  /** Wait this long first (cancellation still ends the wait). @default 0 */
  delayMs?: number;
  /** Apply to this many requests, then remove itself. @default unlimited, until cleared */
  times?: number;
  /** Run the model, then send a response whose bytes do not match its shape (DATA_LOSS). */
  malformed?: boolean;
}

/** The fault applied to one request: `code` resolved to a status number. */
export interface ActiveFault {
  code: number | undefined;
  message: string;
  delayMs: number;
  malformed: boolean;
}

/** Key that applies a fault to every model that has none of its own. */
export const ANY_MODEL = '*';

interface Entry {
  fault: ActiveFault;
  remaining: number;
}

/**
 * Server-level fault injection for ModelInfer, per model name (or `'*'` for all). It runs before the
 * request is validated, so it can make even healthy models such as `identity` fail N times.
 */
export class FaultInjector {
  readonly #entries = new Map<string, Entry>();
  readonly #applied = new Map<string, number>();

  set(model: string, fault: Fault): void {
    const { times = Number.POSITIVE_INFINITY, delayMs = 0 } = fault;
    if (!(times > 0)) throw new RangeError('fault times must be positive');
    if (!(delayMs >= 0)) throw new RangeError('fault delayMs must be non-negative');
    const code = fault.code === undefined ? undefined : statusNumber(fault.code);
    const message = fault.message ?? `fault injected for model '${model}'`;
    this.#entries.set(model, {
      fault: { code, message, delayMs, malformed: fault.malformed === true },
      remaining: times,
    });
  }

  /** Removes the fault for one model (or `'*'`), or every fault when called without a name. */
  clear(model?: string): void {
    if (model === undefined) this.#entries.clear();
    else this.#entries.delete(model);
  }

  /** How many more requests the fault for `model` applies to (0 when there is none). */
  remaining(model: string): number {
    return this.#entries.get(model)?.remaining ?? 0;
  }

  /** How many requests to `model` a fault has been applied to. */
  applied(model: string): number {
    return this.#applied.get(model) ?? 0;
  }

  /** The fault for this request, if any, counting one use of it. */
  take(model: string): ActiveFault | undefined {
    const key = this.#entries.has(model) ? model : ANY_MODEL;
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.#entries.delete(key);
    this.#applied.set(model, this.applied(model) + 1);
    return entry.fault;
  }

  reset(): void {
    this.#entries.clear();
    this.#applied.clear();
  }
}
