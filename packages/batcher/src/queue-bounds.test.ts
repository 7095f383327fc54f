import { ErrorCode, InfergateError } from '@infergate/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const one = (seed: number, columns = 1) => requestOf('m', fp32('INPUT0', 1, columns, seed));

describe('queue bounds and deadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('maxQueueWaitMs: fails a call whose expected wait (measured batch time, rows ahead) is too long', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 1,
      maxBatchSize: 2,
      maxQueueWaitMs: 5,
    });
    // Three batches of 4 ms each: the batcher learns the round trip.
    for (let round = 0; round < 3; round++) {
      const answer = batcher.infer(one(round));
      await vi.advanceTimersByTimeAsync(4);
      transport.release();
      await answer;
    }
    expect(batcher.stats().lanes.m?.serviceMs).toBe(4);
    // Idle lane: no wait, sent at once. Then the slot is busy: the next call waits ~4 ms (admitted),
    // and with one full batch ahead a call would wait ~8 ms: QUEUE_FULL.
    const admitted = [batcher.infer(one(10)), batcher.infer(one(11)), batcher.infer(one(12))];
    const error = await batcher.infer(one(13)).catch((reason: unknown) => reason);
    expect(error).toMatchObject({ code: ErrorCode.QueueFull, retryable: true });
    expect((error as InfergateError).message).toContain('maxQueueWaitMs 5');
    expect(batcher.stats()).toMatchObject({ queued: 2, rejections: { QUEUE_FULL: 1 } });
    for (let round = 0; round < 2; round++) {
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    await Promise.all(admitted);
    await batcher.close();
  });

  it('maxQueueWaitMs: allows for the variance of the measured round trip, not only its mean', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 1,
      maxBatchSize: 2,
      maxQueueWaitMs: 5,
    });
    // Round trips of 2, 6 and 2 ms: mean 2.64 ms, mean deviation 0.95 ms.
    for (const [round, ms] of [2, 6, 2].entries()) {
      const answer = batcher.infer(one(round));
      await vi.advanceTimersByTimeAsync(ms);
      transport.release();
      await answer;
    }
    expect(batcher.stats().lanes.m?.serviceMs).toBeCloseTo(2.64, 6);
    // The slot is busy: by the mean alone the next call would wait ~2.6 ms and be admitted; with
    // four mean deviations (6.4 ms), and the same margin for its own batch (3.8 ms), it could wait
    // longer than maxQueueWaitMs, so it is refused.
    const sent = batcher.infer(one(10));
    const error = await batcher.infer(one(11)).catch((reason: unknown) => reason);
    expect(error).toMatchObject({ code: ErrorCode.QueueFull, retryable: true });
    expect((error as InfergateError).message).toContain('~10.2 ms');
    // A refusal is cheap: no stack trace is captured for it.
    expect((error as InfergateError).stack?.split('\n')).toHaveLength(1);
    transport.release();
    await sent;
    await batcher.close();
  });

  it('maxQueueWaitMs: a call that must wait leaves room for the variance of its own batch too', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 2,
      maxBatchSize: 1,
      maxQueueWaitMs: 5,
    });
    // Round trips of 2, 6 and 2 ms: mean 2.64 ms, mean deviation 0.95 ms, high estimate 6.44 ms.
    for (const [round, ms] of [2, 6, 2].entries()) {
      const answer = batcher.infer(one(round));
      await vi.advanceTimersByTimeAsync(ms);
      transport.release();
      await answer;
    }
    // Calls that go at once are admitted however much the round trip varies: one per slot.
    const sent = [batcher.infer(one(10)), batcher.infer(one(11))];
    expect(transport.held).toBe(2);
    // The next one waits for a slot (6.44 ms ÷ 2 slots, admitted by that alone), but its own batch
    // may take 3.8 ms more than the mean as well: 7.0 ms in all, more than maxQueueWaitMs.
    const error = await batcher.infer(one(12)).catch((reason: unknown) => reason);
    expect(error).toMatchObject({ code: ErrorCode.QueueFull, retryable: true });
    expect((error as InfergateError).message).toContain('~7.0 ms');
    transport.release();
    await Promise.all(sent);
    await batcher.close();
  });

  it("maxQueueWaitMs: counts the round trips' tail, which the mean and its deviation forget", async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 1,
      maxBatchSize: 2,
      maxQueueWaitMs: 5,
    });
    // One 30 ms round trip, then nineteen of 4 ms: the mean is back near 4.4 ms and its deviation
    // near 0, but the longest of the last twenty (their 99th percentile) is still 30 ms.
    for (let round = 0; round < 20; round++) {
      const answer = batcher.infer(one(round));
      await vi.advanceTimersByTimeAsync(round === 0 ? 30 : 4);
      transport.release();
      await answer;
    }
    const lane = batcher.stats().lanes.m;
    expect(lane?.serviceMs).toBeLessThan(4.5);
    expect(lane?.serviceHighMs).toBe(30);
    // Nothing in flight: sent at once, admitted. The next call must wait for the slot: by the mean it
    // would wait ~4.4 ms (admitted); by the tail 30 ms plus its own batch's margin: refused at once.
    const sent = batcher.infer(one(100));
    expect(transport.held).toBe(1);
    const error = await batcher.infer(one(101)).catch((reason: unknown) => reason);
    expect(error).toMatchObject({ code: ErrorCode.QueueFull, retryable: true });
    expect((error as InfergateError).message).toContain('maxQueueWaitMs 5');
    expect(batcher.stats()).toMatchObject({ queued: 0, rejections: { QUEUE_FULL: 1 } });
    transport.release();
    await sent;
    await batcher.close();
  });

  it('fails calls beyond maxQueueSize at once with a retryable QUEUE_FULL', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, maxQueueSize: 2 });
    const accepted = [batcher.infer(one(0)), batcher.infer(one(1)), batcher.infer(one(2))];
    const rejected = batcher.infer(one(3));
    const error = await rejected.catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(InfergateError);
    expect(error).toMatchObject({ code: ErrorCode.QueueFull, retryable: true, backpressure: true });
    expect(batcher.stats()).toMatchObject({ queued: 2, rejections: { QUEUE_FULL: 1 } });
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    transport.release();
    await Promise.all(accepted);
    await batcher.close();
  });

  it('fails calls beyond maxQueueBytes at once with QUEUE_FULL', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, maxQueueBytes: 100 });
    const sent = batcher.infer(one(0, 1));
    const queued = batcher.infer(one(1, 20));
    await expect(batcher.infer(one(2, 10))).rejects.toMatchObject({ code: ErrorCode.QueueFull });
    expect(batcher.stats().queuedBytes).toBe(80);
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    transport.release();
    await Promise.all([sent, queued]);
    await batcher.close();
  });

  it('frees the slot before answering, so callers that send again at once do not hit QUEUE_FULL', async () => {
    vi.useRealTimers();
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 1,
      maxBatchSize: 2,
      maxQueueSize: 2,
    });
    // Three closed-loop callers: the first goes alone, then two in flight while one waits, and so on.
    await Promise.all(
      [0, 1, 2].map(async (caller) => {
        for (let round = 0; round < 20; round++) await batcher.infer(one(caller * 100 + round));
      }),
    );
    expect(batcher.stats()).toMatchObject({ items: 60, rejections: {} });
    await batcher.close();
  });

  it('fails a queued call whose deadline passes with DEADLINE_EXCEEDED, without sending it', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const sent = batcher.infer(one(0));
    const late = batcher.infer(one(1), { timeoutMs: 5 }).catch((error: unknown) => error);
    const patient = batcher.infer(one(2), { timeoutMs: 500 });
    await vi.advanceTimersByTimeAsync(5);
    expect(await late).toMatchObject({ code: ErrorCode.DeadlineExceeded });
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls[1]?.rows).toBe(1);
    transport.release();
    await Promise.all([sent, patient]);
    expect(batcher.stats().rejections).toEqual({ DEADLINE_EXCEEDED: 1 });
    await batcher.close();
  });

  it('holds a queued call with a deadline beyond 2^31 − 1 ms until it is due, and one with Infinity', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const sent = batcher.infer(one(0));
    const late = batcher.infer(one(1), { timeoutMs: 3e9 }).catch((error: unknown) => error);
    const forever = batcher.infer(one(2), { timeoutMs: Number.POSITIVE_INFINITY });
    await vi.advanceTimersByTimeAsync(3e9 - 1);
    expect(batcher.stats().queued).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(await late).toMatchObject({ code: ErrorCode.DeadlineExceeded });
    expect(batcher.stats().queued).toBe(1);
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    transport.release();
    await Promise.all([sent, forever]);
    expect(batcher.stats().rejections).toEqual({ DEADLINE_EXCEEDED: 1 });
    await batcher.close();
  });

  it('gives the batch RPC the latest member deadline and times members out one by one', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const sent = batcher.infer(one(0));
    const short = batcher.infer(one(1), { timeoutMs: 20 }).catch((error: unknown) => error);
    const long = batcher.infer(one(2), { timeoutMs: 200 });
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls[1]?.options.timeoutMs).toBe(200);
    await vi.advanceTimersByTimeAsync(20);
    expect(await short).toMatchObject({ code: ErrorCode.DeadlineExceeded });
    expect(transport.calls[1]?.options.signal?.aborted).toBe(false);
    transport.release();
    await expect(long).resolves.toMatchObject({ outputs: [{ shape: [1, 1] }] });
    await sent;
    await batcher.close();
  });

  it('leaves the RPC without deadline when any member has none', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const answers = [batcher.infer(one(0)), batcher.infer(one(1), { timeoutMs: 50 }), batcher.infer(one(2))];
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls[1]?.options.timeoutMs).toBeUndefined();
    transport.release();
    await Promise.all(answers);
    await batcher.close();
  });

  it('rejects a bad priority or timeout before queueing', async () => {
    const batcher = createMicroBatcher(new EchoTransport(), { priorityLevels: 3 });
    await expect(batcher.infer(one(0), { priority: 4 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
    await expect(batcher.infer(one(0), { timeoutMs: 0 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
    await batcher.close();
  });
});
