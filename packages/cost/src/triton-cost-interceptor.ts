import {
  BATCH_SHARE_CONTEXT,
  batchShareOf,
  type CallOptions,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  type Interceptor,
  withContextValue,
} from '@infergate/core';
import type { Attribution } from './budget.js';
import type { Reservation } from './budget-ledger.js';
import { attributionOf } from './call-attribution.js';
import type { ComputeMeter } from './compute-meter.js';
import type { CostTracker } from './cost-tracker.js';

export interface CostInterceptorOptions {
  /** Endpoint name used to look up the GPU-hour price ("host:port"). */
  endpoint?: string;
  /**
   * Statistics meters by model: when one has a recent per-row compute time, calls are charged
   * nsPerRow × rows instead of their measured latency (which includes queueing and network).
   */
  meters?: ReadonlyMap<string, ComputeMeter>;
  /** Amount to reserve before a call. @default the model's running mean cost per row × rows */
  estimateUsd?: (request: InferRequest, rows: number) => number;
  attribute?: (request: InferRequest, options: CallOptions) => Attribution;
}

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
export function costInterceptor(tracker: CostTracker, options: CostInterceptorOptions = {}): Interceptor {
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
  ) {
    if (costUsd !== null && rows > 0) {
      const previous = meanUsdPerRow.get(request.model);
      const perRow = costUsd / rows;
      meanUsdPerRow.set(request.model, previous === undefined ? perRow : previous * 0.9 + perRow * 0.1);
    }
    try {
      await tracker.settle(reservation, { costUsd });
    } catch (error) {
      tracker.emit('ledger-error', { operation: 'settle', reservationId: reservation.id, error });
    }
  }

  async function release(reservation: Reservation) {
    try {
      await tracker.release(reservation);
    } catch (error) {
      tracker.emit('ledger-error', { operation: 'release', reservationId: reservation.id, error });
    }
  }

  function reserve(request: InferRequest, callOptions: CallOptions, rows: number) {
    return tracker.reserve({
      ...attribute(request, callOptions),
      provider: 'triton',
      estimateUsd: estimate(request, rows),
    });
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
      await settle(reservation, request, costOf(request, slotted, rows, latencyNs), rows);
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
          await settle(reservation, request, costOf(request, callOptions, rows, latencyNs), rows);
        } else await release(reservation);
      }
    },
    ...(next.close ? { close: () => next.close?.() } : {}),
  });
}
