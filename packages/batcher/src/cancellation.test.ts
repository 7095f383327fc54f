import { ErrorCode } from '@infergate/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EchoTransport, fp32, fp32Values, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const one = (seed: number) => requestOf('m', fp32('INPUT0', 1, 1, seed));

describe('cancellation and close', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborting a queued call removes it: CANCELLED, never sent', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const first = batcher.infer(one(1));
    const controller = new AbortController();
    const queued = batcher.infer(one(2), { signal: controller.signal });
    const other = batcher.infer(one(3));
    controller.abort();
    await expect(queued).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    expect(batcher.stats().queued).toBe(1);
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    transport.release();
    expect(fp32Values(await other)).toEqual([3000]);
    await first;
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 1]);
    expect(batcher.stats().rejections).toEqual({ CANCELLED: 1 });
    await batcher.close();
  });

  it('aborting one member of a batch in flight answers it at once and keeps the batch going', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const first = batcher.infer(one(1));
    const controller = new AbortController();
    const leaving = batcher.infer(one(2), { signal: controller.signal });
    const staying = batcher.infer(one(3));
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls[1]?.rows).toBe(2);
    controller.abort();
    await expect(leaving).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    expect(transport.calls[1]?.options.signal?.aborted).toBe(false);
    transport.release();
    expect(fp32Values(await staying)).toEqual([3000]);
    await first;
    await batcher.close();
  });

  it('cancels the batch RPC once every member has aborted', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const first = batcher.infer(one(9));
    const controllers = [new AbortController(), new AbortController()];
    const answers = Promise.allSettled(
      controllers.map((controller, seed) => batcher.infer(one(seed), { signal: controller.signal })),
    );
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    const batch = transport.calls[1];
    expect(batch?.rows).toBe(2);
    controllers[0]?.abort();
    expect(batch?.options.signal?.aborted).toBe(false);
    controllers[1]?.abort();
    expect(batch?.options.signal?.aborted).toBe(true);
    for (const answer of await answers)
      expect(answer).toMatchObject({ reason: { code: ErrorCode.Cancelled } });
    await first;
    await batcher.close();
    expect(transport.held).toBe(0);
  });

  it('close() fails queued calls with CANCELLED, waits for batches in flight and leaves no timer', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { flush: 'fixed', maxInFlightBatches: 1, maxBatchSize: 2 });
    const sent = [batcher.infer(one(1)), batcher.infer(one(2))];
    const queued = batcher.infer(one(3), { timeoutMs: 60_000 });
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    const closing = batcher.close();
    await expect(queued).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    transport.release();
    await closing;
    await Promise.all(sent);
    expect(vi.getTimerCount()).toBe(0);
    await expect(batcher.infer(one(4))).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
  });

  it('close({ drain: true }) sends the queued calls without waiting for the delay', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, { flush: 'fixed', maxQueueDelayMs: 60_000 });
    const answers = [1, 2, 3].map((seed) => batcher.infer(one(seed)));
    await batcher.close({ drain: true });
    expect((await Promise.all(answers)).map((response) => fp32Values(response))).toEqual([
      [1000],
      [2000],
      [3000],
    ]);
    expect(transport.calls.map((call) => call.rows)).toEqual([3]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
