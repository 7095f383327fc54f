import {
  type CallOptions,
  type EncodedTensor,
  ErrorCode,
  InfergateError,
  type InfergateErrorOptions,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  type RequestedOutput,
  reportBatchShare,
  writeOutputsInto,
} from '@infergate/core';
import type { Link } from '@opentelemetry/api';
import { concatInputs, splitOutputs } from './batch-tensors.js';
import { shed } from './batcher-errors.js';
import { failsWithLostConnection } from './connection-loss.js';
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

/**
 * One caller's copy of an error the whole batch got: same code, the original as `cause`. Called
 * inside `shed` (no stack of its own: the cause has the one that says where).
 */
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

/**
 * The RPC's request. `alone`: a lone call that is the whole batch, which the transport answers
 * into the caller's memory itself; a lone call split off a bisected batch is sent without its
 * `into`, like a batch, since its answer may wait for the other halves.
 */
function batchRequest(calls: readonly PendingCall[], alone: boolean): InferRequest {
  const first = (calls[0] as PendingCall).request;
  if (calls.length === 1) {
    if (alone || first.outputs === undefined || !hasOutputsInto(first.outputs)) return first;
    return { ...first, outputs: first.outputs.map(({ into: _into, ...output }) => output) };
  }
  let rows = 0;
  const members: (readonly InferRequest['inputs'][number][])[] = new Array(calls.length);
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index] as PendingCall;
    rows += call.rows;
    members[index] = call.request.inputs;
  }
  const { id: _id, inputs: _inputs, ...common } = first;
  const batched: InferRequest = { ...common, inputs: concatInputs(members, rows) };
  // Each member's `into` is its own rows' memory, not the batch's: the split writes them there.
  if (first.outputs !== undefined && hasOutputsInto(first.outputs))
    batched.outputs = first.outputs.map(({ into: _into, ...output }) => output);
  return batched;
}

function hasOutputsInto(outputs: readonly RequestedOutput[]): boolean {
  for (const output of outputs) if (output.into !== undefined) return true;
  return false;
}

/**
 * A member's share of a batched answer, with the outputs it bound to `into` written into its own
 * memory; a typed error (that member's only) when one does not fit. A member that left while the
 * batch ran (aborted, past its deadline) has its memory back already: nothing is written there.
 * Called as the member is answered, not when its part arrives: a bisected batch answers its members
 * only once every half is in, and a member may leave (and fail) in between.
 */
function memberAnswer(call: PendingCall, answer: InferResponse): InferResponse | InfergateError {
  const { request } = call;
  if (request.outputs === undefined || !hasOutputsInto(request.outputs) || call.settled) return answer;
  try {
    return writeOutputsInto(request, answer, { signal: call.options.signal });
  } catch (error) {
    return InfergateError.from(error, ErrorCode.Internal);
  }
}

/**
 * Call options of the batch RPC: the latest member deadline (so one impatient member does not cut
 * the others short; each member has its own timer), the shared headers and priority, and a signal
 * that fires only once every member has left.
 */
function batchOptions(
  calls: readonly PendingCall[],
  signal: AbortSignal | undefined,
  now: () => number,
): CallOptions {
  const first = (calls[0] as PendingCall).options;
  const options: CallOptions = {};
  if (signal !== undefined) options.signal = signal;
  const tenant = (calls[0] as PendingCall).tenant;
  let latest: number | undefined = 0;
  let oneTenant = true;
  for (const call of calls) {
    if (call.deadline === undefined) latest = undefined;
    else if (latest !== undefined) latest = Math.max(latest, call.deadline);
    if (call.tenant !== tenant) oneTenant = false;
  }
  if (latest !== undefined) options.timeoutMs = Math.max(1, Math.ceil(latest - now()));
  if (first.headers !== undefined) options.headers = first.headers;
  if (first.priority !== undefined) options.priority = first.priority;
  if (oneTenant) options.tenant = tenant;
  return options;
}

/** What a batch's members get once its slot is free: an answer or an error each, in order. */
interface BatchState {
  /** Bisection RPCs left. */
  left: number;
  /** Members to answer (parallel to `answers`). */
  members: PendingCall[];
  answers: (InferResponse | InfergateError)[];
  /** Per member: its answer is its share of a batch, still to be written into its `into` memory. */
  shares: boolean[];
}

function answerLater(
  state: BatchState,
  call: PendingCall,
  answer: InferResponse | InfergateError,
  share = false,
): void {
  state.members.push(call);
  state.answers.push(answer);
  state.shares.push(share);
}

/** Each of `waiting` gets its own copy of the batch's `failure` (see `memberError`). */
function answerFailed(
  state: BatchState,
  waiting: readonly PendingCall[],
  failure: InfergateError,
  calls: number,
  note: string,
): void {
  for (const call of waiting) answerLater(state, call, memberError(failure, calls, note));
}

/** The calls still waiting for an answer (the array itself when none has left). */
function stillWaiting(calls: readonly PendingCall[]): readonly PendingCall[] {
  for (const call of calls) if (call.settled) return calls.filter((member) => !member.settled);
  return calls;
}

/** Sends one group of calls; on INVALID_ARGUMENT bisects (within budget) to isolate the bad calls. */
async function sendGroup(
  dispatch: DispatchContext,
  calls: readonly PendingCall[],
  state: BatchState,
  bisected = false,
): Promise<boolean> {
  const live = stillWaiting(calls);
  if (live.length === 0) return true;
  const group = new SendGroup(live);
  const model = (live[0] as PendingCall).request.model;
  let response: InferResponse;
  dispatch.telemetry.rpcSent();
  const started = process.hrtime.bigint();
  try {
    response = await dispatch.transport.infer(
      batchRequest(live, !bisected),
      batchOptions(live, group.controller?.signal, dispatch.now),
    );
  } catch (error) {
    group.answered();
    const failure = InfergateError.from(error);
    const waiting = live.filter((call) => !call.settled && !failsWithLostConnection(call));
    if (waiting.length === 0) return true;
    if (failure.code === ErrorCode.InvalidArgument && waiting.length > 1 && state.left >= 2) {
      state.left -= 2;
      const middle = Math.ceil(waiting.length / 2);
      const halves = await Promise.all([
        sendGroup(dispatch, waiting.slice(0, middle), state, true),
        sendGroup(dispatch, waiting.slice(middle), state, true),
      ]);
      return halves[0] && halves[1];
    }
    const note = failure.code === ErrorCode.InvalidArgument ? ' (bisection budget spent)' : '';
    if (live.length === 1) for (const call of waiting) answerLater(state, call, failure);
    else shed(() => answerFailed(state, waiting, failure, live.length, note));
    return false;
  }
  group.answered();
  if (live.length === 1) {
    const only = live[0] as PendingCall;
    if (only.options.context !== undefined) {
      const computeNs = process.hrtime.bigint() - started;
      reportBatchShare(only.options, { rows: only.rows, batchRows: only.rows, computeNs });
    }
    answerLater(state, only, response, bisected);
    return true;
  }
  const memberRows: number[] = new Array(live.length);
  let batchRows = 0;
  for (let index = 0; index < live.length; index++) {
    const rows = (live[index] as PendingCall).rows;
    memberRows[index] = rows;
    batchRows += rows;
  }
  let computeNs: bigint | undefined;
  for (const call of live) {
    // Only a caller with a context (a cost interceptor's slot) can receive its share.
    if (call.options.context === undefined) continue;
    computeNs ??= process.hrtime.bigint() - started;
    reportBatchShare(call.options, { rows: call.rows, batchRows, computeNs });
  }
  let parts: EncodedTensor[][];
  try {
    parts = splitOutputs(response, memberRows, model);
  } catch (error) {
    const failure = InfergateError.from(error, ErrorCode.Internal);
    for (const call of live) answerLater(state, call, memberError(failure, live.length));
    return false;
  }
  const { model: answeredModel, modelVersion, parameters } = response;
  for (let index = 0; index < live.length; index++) {
    const call = live[index] as PendingCall;
    const share: InferResponse = {
      model: answeredModel,
      modelVersion,
      id: call.request.id ?? '',
      outputs: parts[index] ?? [],
      parameters,
    };
    answerLater(state, call, share, true);
  }
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
  const state: BatchState = { left: dispatch.maxBisectRpcs, members: [], answers: [], shares: [] };
  try {
    // With tracing off the span records nothing: no context to enter.
    const ok = await dispatch.telemetry.inBatch(span, () => sendGroup(dispatch, calls, state));
    dispatch.release();
    const { members, answers, shares } = state;
    for (let index = 0; index < members.length; index++) {
      const call = members[index] as PendingCall;
      let answer = answers[index] as InferResponse | InfergateError;
      if (shares[index] === true && !(answer instanceof InfergateError)) answer = memberAnswer(call, answer);
      if (answer instanceof InfergateError) call.fail(answer);
      else call.fulfil(answer);
    }
    if (!ok) dispatch.telemetry.batchFailed(span);
  } catch (error) {
    dispatch.release();
    // Nothing above should throw; never leave a caller waiting if it does.
    const failure = InfergateError.from(error, ErrorCode.Internal);
    for (const call of calls) call.fail(failure);
    dispatch.telemetry.batchFailed(span, failure.message);
  } finally {
    span.end();
  }
}
