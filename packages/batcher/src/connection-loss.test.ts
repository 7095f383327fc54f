import {
  type ConnectivityChange,
  type ConnectivityListener,
  type ConnectivityState,
  ErrorCode,
  InfergateError,
} from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

/** An echo transport that reports connectivity changes when the test says so. */
class WatchedTransport extends EchoTransport {
  readonly listeners = new Set<ConnectivityListener>();
  connectivityState(): ConnectivityState {
    return 'ready';
  }
  watchConnectivity(listener: ConnectivityListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  report(change: ConnectivityChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

const one = (seed: number) => requestOf('m', fp32('INPUT0', 1, 1, seed));
const turn = () => new Promise((resolve) => setImmediate(resolve));
/** Two calls fill a batch, which leaves at once; nothing is sent on a timer. */
const options = { flush: 'fixed', maxBatchSize: 2, maxQueueDelayMs: 60_000, maxInFlightBatches: 1 } as const;

async function heldBatch(transport: WatchedTransport) {
  const batcher = createMicroBatcher(transport, options);
  const settled: string[] = [];
  const calls = [0, 1].map((seed) =>
    batcher.infer(one(seed)).then(
      () => {
        settled.push('ok');
      },
      (error: unknown) => {
        settled.push((error as InfergateError).code);
        return error as InfergateError;
      },
    ),
  );
  for (let i = 0; i < 100 && transport.held === 0; i++) await turn();
  expect(transport.held).toBe(1);
  return { batcher, settled, calls };
}

describe('a connection lost under a batch', () => {
  it("fails the batch's members when the transport reports its calls lost, before the RPC's own error arrives", async () => {
    const rpcError = new InfergateError(ErrorCode.Unavailable, 'Connection dropped');
    const transport = new WatchedTransport({ hold: true, fail: () => rpcError });
    const { batcher, settled, calls } = await heldBatch(transport);
    transport.report({ from: 'ready', to: 'idle', callsLost: true });
    await turn();
    // The RPC has not answered yet (still held), and both members have failed already.
    expect(transport.held).toBe(1);
    expect(settled).toEqual([ErrorCode.Unavailable, ErrorCode.Unavailable]);
    const errors = (await Promise.all(calls)) as InfergateError[];
    expect(errors[0]).not.toBe(errors[1]);
    for (const error of errors) {
      expect(error).toMatchObject({ code: ErrorCode.Unavailable, retryable: true, model: 'm' });
      expect(error.details).toMatchObject({ batchCalls: 2 });
      expect(error.cause).toBeInstanceOf(InfergateError);
    }
    // One cause for the batch; no stack of each member's own.
    expect(errors[0]?.cause).toBe(errors[1]?.cause);
    expect(errors[0]?.stack).not.toContain('\n    at ');
    transport.release();
    await batcher.close();
    expect(batcher.stats().batches).toBe(1);
  });

  /**
   * Two members of one batch in flight; the first one's caller moves on through several promise
   * steps (as a router falling back does) when it fails. `report` delivers the loss. Returns the
   * order in which the first caller moved on and the second member failed.
   */
  async function orderAfterLoss(report: (transport: WatchedTransport) => Promise<void>): Promise<string[]> {
    const transport = new WatchedTransport({ hold: true });
    const batcher = createMicroBatcher(transport, options);
    const order: string[] = [];
    const first = batcher.infer(one(0)).catch(async () => {
      for (let step = 0; step < 5; step++) await Promise.resolve();
      order.push('first moved on');
    });
    const second = batcher.infer(one(1)).catch(() => {
      order.push('second failed');
    });
    for (let i = 0; i < 100 && transport.held === 0; i++) await turn();
    expect(transport.held).toBe(1);
    await report(transport);
    await Promise.all([first, second]);
    transport.release();
    await batcher.close();
    return order;
  }

  it("lets the first member's failure run its caller's whole chain of reactions before the others fail", async () => {
    const order = await orderAfterLoss(async (transport) => {
      transport.report({ from: 'ready', to: 'idle', callsLost: true });
    });
    expect(order).toEqual(['first moved on', 'second failed']);
  });

  it("lets the first member's chain run first when the loss is reported from an I/O callback, as a socket's close is", async () => {
    // In an event-loop callback (not a promise reaction) Node runs the nextTick queue before the
    // microtask queue: a member failed "on the next tick" would fail before the first member's
    // caller had run a single reaction.
    const order = await orderAfterLoss(
      (transport) =>
        new Promise<void>((resolve) =>
          setImmediate(() => {
            transport.report({ from: 'ready', to: 'idle', callsLost: true });
            resolve();
          }),
        ),
    );
    expect(order).toEqual(['first moved on', 'second failed']);
  });

  it("keeps the first member ahead when the RPC's own error arrives in the same turn as the report", async () => {
    // As the http2 engine does: the RPC fails first (its stream closed), then the loss is reported.
    const transport = new WatchedTransport({
      hold: true,
      fail: () => new InfergateError(ErrorCode.Unavailable, 'Connection dropped'),
    });
    const batcher = createMicroBatcher(transport, options);
    const order: string[] = [];
    const first = batcher.infer(one(0)).catch(async () => {
      for (let step = 0; step < 10; step++) await Promise.resolve();
      order.push('first moved on');
    });
    const second = batcher.infer(one(1)).catch(() => {
      order.push('second failed');
    });
    for (let i = 0; i < 100 && transport.held === 0; i++) await turn();
    expect(transport.held).toBe(1);
    transport.release();
    transport.report({ from: 'ready', to: 'idle', callsLost: true });
    await Promise.all([first, second]);
    expect(order).toEqual(['first moved on', 'second failed']);
    await batcher.close();
  });

  it('leaves the batch to its RPC when the connection went away without its calls (GOAWAY, idle)', async () => {
    const transport = new WatchedTransport({ hold: true });
    const { batcher, settled, calls } = await heldBatch(transport);
    transport.report({ from: 'ready', to: 'idle' });
    await turn();
    expect(settled).toEqual([]);
    transport.release();
    await Promise.all(calls);
    expect(settled).toEqual(['ok', 'ok']);
    expect(transport.listeners.size).toBe(1);
    await batcher.close();
    // Closing the batcher stops its watch.
    expect(transport.listeners.size).toBe(0);
  });
});

describe("a batch's failure", () => {
  it('gives each member its own copy of the error, without a stack of its own (the cause has it)', async () => {
    const original = new InfergateError(ErrorCode.Unavailable, 'Connection dropped', { endpoint: 'x:1' });
    const transport = new WatchedTransport({ hold: true, fail: () => original });
    const { batcher, calls } = await heldBatch(transport);
    transport.release();
    const errors = (await Promise.all(calls)) as InfergateError[];
    expect(errors[0]).not.toBe(errors[1]);
    for (const error of errors) {
      expect(error).toMatchObject({ code: ErrorCode.Unavailable, retryable: true, endpoint: 'x:1' });
      expect(error.cause).toBe(original);
      expect(error.stack).not.toContain('\n    at ');
    }
    expect(original.stack).toContain('\n    at ');
    await batcher.close();
  });
});
