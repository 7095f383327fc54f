import {
  type CallOptions,
  ErrorCode,
  InfergateError,
  type InfergateErrorOptions,
  type InferRequest,
  type InferTransport,
  reportBatchShare,
} from '@infergate/core';
import { context, type Link, SpanStatusCode, trace } from '@opentelemetry/api';
import { concatInputs, splitOutputs } from './batch-tensors.js';
import { type PendingCall, SendGroup } from './pending-call.js';
import type { BatcherTelemetry } from './telemetry.js';

export interface DispatchContext {
  readonly transport: InferTransport;
  readonly telemetry: BatcherTelemetry;
  readonly maxBisectRpcs: number;
  readonly now: () => number;
  /**
   * Frees the batch's slot. Called before any member is answered, so that callers who send again
   * at once find the slot free and the queue drained rather than a spurious QUEUE_FULL.
   */
  readonly release: () => void;
}

/** One caller's copy of an error the whole batch got: same code, the original as `cause`. */
function memberError(failure: InfergateError, calls: number, note = ''): InfergateError {
  const options: InfergateErrorOptions = {
    cause: failure,
    retryable: failure.retryable,
    details: { batchCalls: calls, ...failure.details },
  };
  if (failure.model !== undefined) options.model = failure.model;
  if (failure.endpoint !== undefined) options.endpoint = failure.endpoint;
  if (failure.grpcCode !== undefined) options.grpcCode = failure.grpcCode;
  if (failure.retryAfterMs !== undefined) options.retryAfterMs = failure.retryAfterMs;
  return new InfergateError(
    failure.code,
    `a batch of ${calls} calls failed${note}: ${failure.rawMessage}`,
    options,
  );
}

function batchRequest(calls: readonly PendingCall[]): InferRequest {
  const first = (calls[0] as PendingCall).request;
  if (calls.length === 1) return first;
  let rows = 0;
  for (const call of calls) rows += call.rows;
  const { id: _id, inputs: _inputs, ...common } = first;
  return {
    ...common,
    inputs: concatInputs(
      calls.map((call) => call.request.inputs),
      rows,
    ),
  };
}

/**
 * Call options of the batch RPC: the latest member deadline (so one impatient member does not cut
 * the others short; each member has its own timer), the shared headers and priority, and a signal
 * that fires only once every member has left.
 */
function batchOptions(calls: readonly PendingCall[], signal: AbortSignal, now: number): CallOptions {
  const first = (calls[0] as PendingCall).options;
  const options: CallOptions = { signal };
  let latest: number | undefined = 0;
  for (const call of calls) {
    if (call.deadline === undefined) latest = undefined;
    else if (latest !== undefined) latest = Math.max(latest, call.deadline);
    if (latest === undefined) break;
  }
  if (latest !== undefined) options.timeoutMs = Math.max(1, Math.ceil(latest - now));
  if (first.headers !== undefined) options.headers = first.headers;
  if (first.priority !== undefined) options.priority = first.priority;
  const tenant = (calls[0] as PendingCall).tenant;
  if (calls.every((call) => call.tenant === tenant)) options.tenant = tenant;
  return options;
}

interface BatchState {
  /** Bisection RPCs left. */
  left: number;
  /** Answers to hand out once the slot is free. */
  outcomes: (() => void)[];
}

/** Sends one group of calls; on INVALID_ARGUMENT bisects (within budget) to isolate the bad calls. */
async function sendGroup(
  dispatch: DispatchContext,
  calls: readonly PendingCall[],
  state: BatchState,
): Promise<boolean> {
  const live = calls.filter((call) => !call.settled);
  if (live.length === 0) return true;
  const group = new SendGroup(live);
  const model = (live[0] as PendingCall).request.model;
  let response: Awaited<ReturnType<InferTransport['infer']>>;
  dispatch.telemetry.rpcSent();
  const started = process.hrtime.bigint();
  try {
    response = await dispatch.transport.infer(
      batchRequest(live),
      batchOptions(live, group.controller.signal, dispatch.now()),
    );
  } catch (error) {
    group.answered();
    const failure = InfergateError.from(error);
    const waiting = live.filter((call) => !call.settled);
    if (waiting.length === 0) return true;
    if (failure.code === ErrorCode.InvalidArgument && waiting.length > 1 && state.left >= 2) {
      state.left -= 2;
      const middle = Math.ceil(waiting.length / 2);
      const halves = await Promise.all([
        sendGroup(dispatch, waiting.slice(0, middle), state),
        sendGroup(dispatch, waiting.slice(middle), state),
      ]);
      return halves[0] && halves[1];
    }
    const note = failure.code === ErrorCode.InvalidArgument ? ' (bisection budget spent)' : '';
    for (const call of waiting) {
      const memberFailure = live.length === 1 ? failure : memberError(failure, live.length, note);
      state.outcomes.push(() => call.fail(memberFailure));
    }
    return false;
  }
  group.answered();
  const computeNs = process.hrtime.bigint() - started;
  const batchRows = live.reduce((sum, call) => sum + call.rows, 0);
  for (const call of live) reportBatchShare(call.options, { rows: call.rows, batchRows, computeNs });
  if (live.length === 1) {
    const only = live[0] as PendingCall;
    state.outcomes.push(() => only.fulfil(response));
    return true;
  }
  let parts: ReturnType<typeof splitOutputs>;
  try {
    parts = splitOutputs(
      response,
      live.map((call) => call.rows),
      model,
    );
  } catch (error) {
    const failure = InfergateError.from(error, ErrorCode.Internal);
    for (const call of live) state.outcomes.push(() => call.fail(memberError(failure, live.length)));
    return false;
  }
  live.forEach((call, index) => {
    const answer = {
      model: response.model,
      modelVersion: response.modelVersion,
      id: call.request.id ?? '',
      outputs: parts[index] ?? [],
      parameters: response.parameters,
    };
    state.outcomes.push(() => call.fulfil(answer));
  });
  return true;
}

/** Sends a batch under a `batch <model>` span linked to every member's span. */
export async function sendBatch(dispatch: DispatchContext, calls: readonly PendingCall[]): Promise<void> {
  const first = calls[0] as PendingCall;
  const links: Link[] = [];
  let rows = 0;
  for (const call of calls) {
    rows += call.rows;
    if (call.link !== undefined) links.push({ context: call.link });
  }
  const span = dispatch.telemetry.startBatchSpan(first.request.model, links, calls.length, rows);
  const state: BatchState = { left: dispatch.maxBisectRpcs, outcomes: [] };
  try {
    const ok = await context.with(trace.setSpan(context.active(), span), () =>
      sendGroup(dispatch, calls, state),
    );
    dispatch.release();
    for (const outcome of state.outcomes) outcome();
    if (!ok) span.setStatus({ code: SpanStatusCode.ERROR });
  } catch (error) {
    dispatch.release();
    // Nothing above should throw; never leave a caller waiting if it does.
    const failure = InfergateError.from(error, ErrorCode.Internal);
    for (const call of calls) call.fail(failure);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
  } finally {
    span.end();
  }
}
