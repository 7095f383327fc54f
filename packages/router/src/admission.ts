import { type CallOptions, type CallScope, callSloOf, ErrorCode, InfergateError } from '@infergate/core';
import type * as Zod from 'zod';
import type { z } from 'zod';
import type { LoadBook } from './load-stats.js';
import type { RouteTarget } from './route-target.js';

/** The `admission` option's schema, built with the router's lazily loaded zod (config.ts). */
export function admissionSchema(z: typeof Zod.z) {
  return z
    .object({
      /**
       * Calls in flight from this router per target (all models together) past which the target
       * takes no more: the call goes to another candidate, else fails with RESOURCE_EXHAUSTED
       * (reason "overloaded") instead of queueing behind the others. @default none (no limit)
       */
      maxInFlight: z.number().int().positive().optional(),
      /**
       * The share of `maxInFlight` a call of lower priority may fill: priority 2 gets this share,
       * 3 its square, and so on (1 and unset get all of it), so low-priority work is shed first as
       * a target fills up. @default 0.75
       */
      lowPriorityShare: z.number().min(0).max(1).default(0.75),
      /**
       * Answers a target must have given for a model before its latency average is trusted to turn
       * a call away for its deadline (or SLO). @default 5
       */
      minSamples: z.number().int().positive().default(5),
    })
    .strict();
}

// An interface, not a type alias, so that the API reference lists every field.
/** The router's `admission` option. */
export interface AdmissionOptions extends z.input<ReturnType<typeof admissionSchema>> {}
type ResolvedAdmission = z.output<ReturnType<typeof admissionSchema>>;

/**
 * Why a candidate was passed over: it could not answer in time, it has no room at this priority,
 * or the call would cost more there than the call's `maxCostUsd` (or its price is unknown).
 */
export type Refusal = 'slow' | 'full' | 'cost' | 'limited';

/** The per-call facts admission decides on, fixed when the call starts. */
export interface AdmissionCall {
  /** When the first answer is due at the latest (epoch ms): the SLO's, else undefined. */
  sloAt: number | undefined;
  priority: number | undefined;
  maxCostUsd: number | undefined;
}

/** A call with no SLO, priority or cost cap (most calls): shared, never changed. */
const PLAIN_CALL: AdmissionCall = Object.freeze({
  sloAt: undefined,
  priority: undefined,
  maxCostUsd: undefined,
});

/** Reads a call's SLO (its own `sloTtftMs`, else the context's) and priority; INVALID_ARGUMENT on a bad one. */
export function admissionCall(
  call: CallOptions & { sloTtftMs?: number | undefined; maxCostUsd?: number | undefined },
): AdmissionCall {
  const ttftMs = call.sloTtftMs ?? callSloOf(call)?.ttftMs;
  if (ttftMs !== undefined && !(typeof ttftMs === 'number' && ttftMs > 0 && Number.isFinite(ttftMs)))
    throw new InfergateError(ErrorCode.InvalidArgument, `sloTtftMs must be a positive number, got ${ttftMs}`);
  const maxCostUsd = call.maxCostUsd;
  if (
    maxCostUsd !== undefined &&
    !(typeof maxCostUsd === 'number' && maxCostUsd >= 0 && Number.isFinite(maxCostUsd))
  )
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `maxCostUsd must be a non-negative number, got ${maxCostUsd}`,
    );
  if (ttftMs === undefined && call.priority === undefined && maxCostUsd === undefined) return PLAIN_CALL;
  return {
    sloAt: ttftMs === undefined ? undefined : Date.now() + ttftMs,
    priority: call.priority,
    maxCostUsd,
  };
}

/**
 * Deadline-aware admission and priority shedding. A call whose time left (its deadline or its SLO,
 * whichever is nearer) is shorter than a target's observed latency for the model — queue wait at
 * the server plus service time, as this process sees it — is not sent there: a faster candidate
 * takes it, or it fails at once with DEADLINE_EXCEEDED ("cannot meet deadline") instead of timing
 * out later and holding a slot meanwhile. A target with `maxInFlight` calls in flight takes no more,
 * and lower priorities stop earlier.
 */
export class Admission {
  readonly #options: ResolvedAdmission;
  /** `maxInFlight`, read by every call: kept here, so a call does not read the options object too. */
  readonly #maxInFlight: number | undefined;
  readonly #book: LoadBook;

  constructor(options: ResolvedAdmission, book: LoadBook) {
    this.#options = options;
    this.#maxInFlight = options.maxInFlight;
    this.#book = book;
  }

  /** Milliseconds the call has for its first answer now; undefined without a deadline or SLO. */
  budgetMs(call: AdmissionCall, scope: CallScope): number | undefined {
    const remaining = scope.remainingMs();
    const slo = call.sloAt === undefined ? undefined : Math.max(0, call.sloAt - Date.now());
    if (remaining === undefined) return slo;
    return slo === undefined ? remaining : Math.min(remaining, slo);
  }

  /** Undefined when `target` may take the call, else why not. */
  refuse<T extends RouteTarget>(
    candidate: T,
    model: string | undefined,
    call: AdmissionCall,
    budgetMs: number | undefined,
    costOf: ((target: T) => number | undefined) | undefined,
  ): Refusal | undefined {
    const target = candidate.name;
    // Rate-limit foresight: the provider's last answer said the account is (nearly) out until its reset.
    if (candidate.rateLimits !== undefined && candidate.rateLimits.limitedForMs(Date.now()) > 0)
      return 'limited';
    if (call.maxCostUsd !== undefined) {
      // The price guard: a fallback never lands on a dearer target than the caller allowed, nor on
      // one whose price is unknown (a free model must not fall back to a paid one unnoticed).
      const cost = costOf?.(candidate);
      if (cost === undefined || cost > call.maxCostUsd) return 'cost';
    }
    const limit = this.#maxInFlight;
    if (limit !== undefined) {
      const priority = call.priority ?? 0;
      const share = priority <= 1 ? 1 : this.#options.lowPriorityShare ** (priority - 1);
      if (this.#book.inFlight(target) >= Math.max(1, Math.floor(limit * share))) return 'full';
    }
    if (budgetMs !== undefined) {
      const stats = this.#book.get(target, model);
      if (stats.samples >= this.#options.minSamples && stats.ewmaMs > budgetMs) return 'slow';
    }
    return undefined;
  }

  /** The error of a call no candidate admitted. */
  error(
    refusal: Refusal,
    candidates: readonly RouteTarget[],
    model: string | undefined,
    call: AdmissionCall,
    budgetMs: number | undefined,
  ): InfergateError {
    const targets = candidates.map((candidate) => candidate.name);
    if (refusal === 'limited') {
      const now = Date.now();
      const waits = candidates.map((candidate) => candidate.rateLimits?.limitedForMs(now) ?? 0);
      return new InfergateError(
        ErrorCode.ResourceExhausted,
        `every target's rate limit is spent until its reset (${targets.join(', ')})`,
        { retryAfterMs: Math.ceil(Math.min(...waits)), details: { reason: 'rate limited', targets } },
      );
    }
    if (refusal === 'cost') {
      return new InfergateError(
        ErrorCode.BudgetExceeded,
        `no target can take the call within its cost cap of $${call.maxCostUsd} (${targets.join(', ')})`,
        { retryable: false, details: { reason: 'cost cap', maxCostUsd: call.maxCostUsd, targets } },
      );
    }
    if (refusal === 'full') {
      return new InfergateError(
        ErrorCode.ResourceExhausted,
        `every target is at its in-flight limit for priority ${call.priority ?? 0} (${targets.join(', ')})`,
        { details: { reason: 'overloaded', priority: call.priority ?? 0, targets } },
      );
    }
    // An own entry per target, also one named `__proto__` (which a plain assignment would drop).
    const expectedMs: Record<string, number> = Object.fromEntries(
      targets.map((target) => [target, Math.round(this.#book.get(target, model).ewmaMs)]),
    );
    return new InfergateError(
      ErrorCode.DeadlineExceeded,
      `cannot meet deadline: ${Math.round(budgetMs ?? 0)} ms left, the targets answer in ${Object.values(expectedMs).join(', ')} ms`,
      {
        retryable: false,
        details: { reason: 'cannot meet deadline', budgetMs: Math.round(budgetMs ?? 0), expectedMs },
      },
    );
  }
}
