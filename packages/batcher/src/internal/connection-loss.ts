// The connection-loss failure path: when the transport reports that its connection closed under its
// calls (`ConnectivityChange.callsLost`), every call of the batches in flight has already failed
// there; their members are failed at once, in that turn, instead of after each RPC's error has made
// its way back (a failover router moves them to another target sooner).
import {
  type ConnectivityChange,
  ErrorCode,
  InfergateError,
  type InferTransport,
  isConnectivitySource,
} from '@infergate/core';
import { shed } from './batcher-errors.js';
import type { PendingCall } from './pending-call.js';

/** Members a lost connection fails after the microtask queue drains (see `failLostBatches`). */
const failingLater = new WeakSet<PendingCall>();

/**
 * True for a call whose batch's connection was lost and that fails once the microtask queue
 * drains: its RPC's own error, arriving meanwhile, must not fail it first (it would do so for every
 * such member at once, in the middle of the first member's move to another target).
 */
export function failsWithLostConnection(call: PendingCall): boolean {
  return failingLater.has(call);
}

/**
 * Calls `onCallsLost` each time `transport` reports a connection lost under its calls. Returns the
 * function that stops watching (a no-op for a transport that reports no connectivity).
 */
export function watchCallsLost(transport: InferTransport, onCallsLost: () => void): () => void {
  if (!isConnectivitySource(transport)) return () => {};
  return transport.watchConnectivity((change: ConnectivityChange) => {
    if (change.callsLost === true) onCallsLost();
  });
}

/**
 * Fails the members of the batches in flight on a lost connection: UNAVAILABLE (retryable), as the
 * RPCs' own errors would be. One cause per batch; each member gets its own error, built without a
 * stack (the cause says where; a stack per member was most of the cost of failing a large batch).
 *
 * The first member fails now and the others once the microtask queue has drained: each failure
 * travels up its caller's chain of promise reactions (a router moving it to another target), and
 * failed together they advance one reaction at a time, turn about, so the first reached the
 * fallback only after every member had passed every step before it. Alone, it gets there first; the
 * others follow before the event loop moves on. A `nextTick` alone is not "once drained": in an
 * event-loop callback (a socket's close, which is where a lost connection is reported) Node runs the
 * nextTick queue before the microtask queue, so the others would fail before the first member's
 * caller had run one reaction. A tick queued from a microtask runs only after the microtask queue
 * is empty, wherever the report came from.
 */
export function failLostBatches(batches: Iterable<readonly PendingCall[]>): void {
  const lost: LostBatch[] = [];
  for (const calls of batches) {
    const waiting = calls.filter((call) => !call.settled);
    if (waiting.length === 0) continue;
    const model = (waiting[0] as PendingCall).request.model;
    const text = `the connection was lost with a batch of ${calls.length} calls in flight`;
    const cause = new InfergateError(ErrorCode.Unavailable, text, { model });
    lost.push({ waiting, size: calls.length, model, text, cause });
  }
  const head = lost[0];
  if (head === undefined) return;
  // Only the first member's error is built before it fails: the others' wait with them.
  const [first, ...restOfHead] = head.waiting as [PendingCall, ...PendingCall[]];
  first.fail(shed(() => memberError(head)));
  const others: [PendingCall, LostBatch][] = [];
  for (const batch of lost) {
    for (const call of batch === head ? restOfHead : batch.waiting) others.push([call, batch]);
  }
  if (others.length === 0) return;
  for (const [call] of others) failingLater.add(call);
  queueMicrotask(() => process.nextTick(failAll, others));
}

/** One batch in flight on the lost connection: its members not settled yet, and their shared cause. */
interface LostBatch {
  waiting: readonly PendingCall[];
  size: number;
  model: string;
  text: string;
  cause: InfergateError;
}

function memberError(batch: LostBatch): InfergateError {
  return new InfergateError(ErrorCode.Unavailable, batch.text, {
    cause: batch.cause,
    model: batch.model,
    retryable: true,
    details: { batchCalls: batch.size },
  });
}

function failAll(others: readonly [PendingCall, LostBatch][]): void {
  const errors = shed(() => others.map(([, batch]) => memberError(batch)));
  // A member that settled meanwhile (its RPC's own error, its deadline) ignores the second answer.
  for (let index = 0; index < others.length; index++) {
    (others[index] as [PendingCall, LostBatch])[0].fail(errors[index] as InfergateError);
  }
}
