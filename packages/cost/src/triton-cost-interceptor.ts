import {
  BATCH_SHARE_CONTEXT,
  batchShareOf,
  type CallOptions,
  createCallScope,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  type Interceptor,
  parseOptions,
  withContextValue,
} from '@infergate/core';
import { z } from 'zod';
import type { Attribution } from './budget.js';
import type { Reservation } from './budget-ledger.js';
import { attributionOf } from './call-attribution.js';
import type { ComputeMeter } from './compute-meter.js';
import type { CostTracker } from './cost-tracker.js';
import { finishReservation } from './internal/finish-reservation.js';
import { functionSchema, isCostTracker, trackerSchema } from './internal/tracker-schema.js';

export interface CostInterceptorOptions {
  /** Prices, budgets and the ledger the calls are charged to. */
  tracker: CostTracker;
  /** Endpoint name used to look up the GPU-hour price ("host:port"). */
  endpoint?: string;
  /**
   * Statistics meters by model: when one has a recent per-row compute time, calls are charged
   * nsPerRow × rows instead of their measured latency (which includes queueing and network).
   */
  meters?: ReadonlyMap<string, ComputeMeter>;
  /** Amount to reserve before a call. @default the model's running mean cost per row × rows */
  estimateUsd?: (request: InferRequest, rows: number) => number;
  /** Who a call is charged to. @default tenant from CallOptions.tenant, key from API_KEY_CONTEXT */
  attribute?: (request: InferRequest, options: CallOptions) => Attribution;
}

const optionsSchema = z.strictObject({
  tracker: trackerSchema,
  endpoint: z.string().min(1).optional(),
  meters: z.instanceof(Map, { message: 'meters must be a Map of model → ComputeMeter' }).optional(),
  estimateUsd: functionSchema('estimateUsd').optional(),
  attribute: functionSchema('attribute').optional(),
});

/** The call's options with an empty batch-share slot in its context (unless one is there). */
function withBatchShareSlot(options: CallOptions): CallOptions {
  if (options.context?.has(BATCH_SHARE_CONTEXT)) return options;
  return {
    ...options,
    context: withContextValue(options.context, BATCH_SHARE_CONTEXT, { rows: 0, batchRows: 0 }),
  };
}

/** Rows a request carries: the first input's first dimension (1 for scalars). */
export function requestRows(request: InferRequest): number {
  const first = request.inputs[0]?.shape[0];
  return first !== undefined && first > 0 ? first : 1;
}

/**
 * An interceptor that charges Triton calls GPU time at the endpoint's/model's GPU-hour price, to the
 * tenant in CallOptions.tenant. Compute time, in order of preference: the batch share a batcher put
 * in the call context (BATCH_SHARE_CONTEXT), the model's per-row compute_infer from a ComputeMeter,
 * and the call's measured latency.
 */
export function costInterceptor(options: CostInterceptorOptions): Interceptor;
/** @deprecated Pass `{ tracker, ...options }`; this form is removed in 1.0. */
export function costInterceptor(
  tracker: CostTracker,
  options?: Omit<CostInterceptorOptions, 'tracker'>,
): Interceptor;
export function costInterceptor(
  first: CostInterceptorOptions | CostTracker,
  rest: Omit<CostInterceptorOptions, 'tracker'> = {},
): Interceptor {
  const input = isCostTracker(first) ? { ...rest, tracker: first } : first;
  parseOptions(optionsSchema, input, 'costInterceptor options');
  const options: CostInterceptorOptions = input;
  const { tracker } = options;
  const attribute =
    options.attribute ?? ((request, callOptions) => attributionOf(callOptions, request.model));
  const meanUsdPerRow = new Map<string, number>();

  function estimate(request: InferRequest, rows: number): number {
    if (options.estimateUsd) return options.estimateUsd(request, rows);
    return (meanUsdPerRow.get(request.model) ?? 0) * rows;
  }

  function costOf(
    request: InferRequest,
    callOptions: CallOptions,
    rows: number,
    latencyNs: bigint,
  ): number | null {
    const share = batchShareOf(callOptions);
    const base = { model: request.model, ...(options.endpoint ? { endpoint: options.endpoint } : {}) };
    if (share?.computeNs !== undefined)
      return tracker.gpuCost({
        ...base,
        rows: share.rows,
        batchRows: share.batchRows,
        computeNs: share.computeNs,
      });
    const nsPerRow = options.meters?.get(request.model)?.latest?.nsPerRow;
    if (nsPerRow !== undefined)
      return tracker.gpuCost({ ...base, rows, batchRows: rows, computeNs: nsPerRow * rows });
    // Measured latency covers the whole execution the call rode in; charge the call its rows' share.
    return tracker.gpuCost({
      ...base,
      rows: share?.rows ?? rows,
      batchRows: share?.batchRows ?? rows,
      computeNs: latencyNs,
    });
  }

  async function settle(
    reservation: Reservation,
    request: InferRequest,
    costUsd: number | null,
    rows: number,
    signal: AbortSignal | undefined,
  ) {
    if (costUsd !== null && rows > 0) {
      const previous = meanUsdPerRow.get(request.model);
      const perRow = costUsd / rows;
      meanUsdPerRow.set(request.model, previous === undefined ? perRow : previous * 0.9 + perRow * 0.1);
    }
    await finishReservation(tracker, reservation, 'settle', () =>
      tracker.settle(reservation, { costUsd }, { signal }),
    );
  }

  const release = (reservation: Reservation) =>
    finishReservation(tracker, reservation, 'release', () => tracker.release(reservation));

  // The wait for the budget store obeys the call's signal and deadline (the store may be remote).
  async function reserve(request: InferRequest, callOptions: CallOptions, rows: number) {
    const scope = createCallScope({ signal: callOptions.signal, timeoutMs: callOptions.timeoutMs });
    try {
      return await tracker.reserve({
        ...attribute(request, callOptions),
        provider: 'triton',
        estimateUsd: estimate(request, rows),
        signal: scope.signal,
      });
    } finally {
      scope.dispose();
    }
  }

  return (next: InferTransport): InferTransport => ({
    async infer(request: InferRequest, callOptions: CallOptions): Promise<InferResponse> {
      const rows = requestRows(request);
      const reservation = await reserve(request, callOptions, rows);
      // A batcher below fills the slot with this call's share of the execution it rode in.
      const slotted = withBatchShareSlot(callOptions);
      const started = process.hrtime.bigint();
      let response: InferResponse;
      try {
        response = await next.infer(request, slotted);
      } catch (error) {
        await release(reservation);
        throw error;
      }
      const latencyNs = process.hrtime.bigint() - started;
      await settle(reservation, request, costOf(request, slotted, rows, latencyNs), rows, callOptions.signal);
      return response;
    },
    async *stream(request: InferRequest, callOptions: CallOptions): AsyncIterable<InferResponse> {
      const rows = requestRows(request);
      const reservation = await reserve(request, callOptions, rows);
      const started = process.hrtime.bigint();
      let completed = false;
      try {
        yield* next.stream(request, callOptions);
        completed = true;
      } finally {
        if (completed) {
          const latencyNs = process.hrtime.bigint() - started;
          await settle(
            reservation,
            request,
            costOf(request, callOptions, rows, latencyNs),
            rows,
            callOptions.signal,
          );
        } else await release(reservation);
      }
    },
    ...(next.close ? { close: () => next.close?.() } : {}),
  });
}
