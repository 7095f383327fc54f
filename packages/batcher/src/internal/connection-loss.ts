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
 * Fails the members of a batch in flight whose connection was lost: UNAVAILABLE (retryable), as the
 * RPC's own error would be. One cause per batch; each member gets its own error, built without a
 * stack (the cause says where; a stack per member was most of the cost of failing a large batch).
 */
export function failLostBatch(calls: readonly PendingCall[]): void {
  const waiting = calls.filter((call) => !call.settled);
  if (waiting.length === 0) return;
  const model = (waiting[0] as PendingCall).request.model;
  const text = `the connection was lost with a batch of ${calls.length} calls in flight`;
  const cause = new InfergateError(ErrorCode.Unavailable, text, { model });
  const errors = shed(() =>
    waiting.map(
      () =>
        new InfergateError(ErrorCode.Unavailable, text, {
          cause,
          model,
          retryable: true,
          details: { batchCalls: calls.length },
        }),
    ),
  );
  for (let index = 0; index < waiting.length; index++) {
    (waiting[index] as PendingCall).fail(errors[index] as InfergateError);
  }
}
