import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const FAKE = {
  toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'],
} as const;

function one(seed: number) {
  return requestOf('m', fp32('INPUT0', 1, 4, seed));
}

describe('flush policies', () => {
  beforeEach(() => {
    vi.useFakeTimers(FAKE as unknown as Parameters<typeof vi.useFakeTimers>[0]);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('adaptive: sends a lone call at once when no batch is in flight', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport);
    const answer = batcher.infer(one(1));
    expect(transport.calls).toHaveLength(1);
    await answer;
    expect(batcher.stats()).toMatchObject({ batches: 1, items: 1, queued: 0 });
    await batcher.close();
  });

  it('adaptive: gathers while every slot is busy and sends the gathered batch when one frees', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 2 });
    const first = [batcher.infer(one(1)), batcher.infer(one(2))];
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 1]);
    const waiting = [3, 4, 5, 6, 7].map((seed) => batcher.infer(one(seed)));
    await vi.advanceTimersByTimeAsync(50);
    expect(transport.calls).toHaveLength(2);
    expect(batcher.stats().queued).toBe(5);
    transport.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 1, 5]);
    transport.release();
    await Promise.all([...first, ...waiting]);
    await batcher.close();
  });

  it('adaptive: never puts more rows in a batch than maxBatchSize', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, maxBatchSize: 4 });
    const answers = Array.from({ length: 11 }, (_, seed) => batcher.infer(one(seed)));
    for (let round = 0; round < 4; round++) {
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    await Promise.all(answers);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 4, 4, 2]);
    await batcher.close();
  });

  it('fixed: waits maxQueueDelayMs from the first call before sending a partial batch', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, { flush: 'fixed', maxQueueDelayMs: 10 });
    const answers = [batcher.infer(one(1))];
    await vi.advanceTimersByTimeAsync(6);
    answers.push(batcher.infer(one(2)), batcher.infer(one(3)));
    await vi.advanceTimersByTimeAsync(3.5);
    expect(transport.calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(0.5);
    expect(transport.calls.map((call) => call.rows)).toEqual([3]);
    await Promise.all(answers);
    await batcher.close();
  });

  it('fixed: sends at once when the batch is full', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, { flush: 'fixed', maxQueueDelayMs: 1000, maxBatchSize: 4 });
    const answers = [1, 2, 3, 4, 5].map((seed) => batcher.infer(one(seed)));
    expect(transport.calls.map((call) => call.rows)).toEqual([4]);
    await vi.advanceTimersByTimeAsync(999);
    expect(transport.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(transport.calls.map((call) => call.rows)).toEqual([4, 1]);
    await Promise.all(answers);
    await batcher.close();
  });

  it('fixed: a batch whose delay expired while the slots were busy goes when a slot frees', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      flush: 'fixed',
      maxQueueDelayMs: 5,
      maxInFlightBatches: 1,
    });
    const answers = [batcher.infer(one(1))];
    await vi.advanceTimersByTimeAsync(5);
    expect(transport.calls).toHaveLength(1);
    answers.push(batcher.infer(one(2)), batcher.infer(one(3)));
    await vi.advanceTimersByTimeAsync(20);
    expect(transport.calls).toHaveLength(1);
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 2]);
    transport.release();
    await Promise.all(answers);
    await batcher.close();
  });

  it('keeps priorities apart and gives a free slot to the higher priority first', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    const answers = [batcher.infer(one(0))];
    answers.push(batcher.infer(one(1), { priority: 2 }), batcher.infer(one(2), { priority: 2 }));
    answers.push(batcher.infer(one(3), { priority: 1 }));
    answers.push(batcher.infer(one(4)));
    for (let round = 0; round < 4; round++) {
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    await Promise.all(answers);
    expect(transport.calls.map((call) => [call.rows, call.options.priority])).toEqual([
      [1, undefined],
      [1, 1],
      [2, 2],
      [1, undefined],
    ]);
    await batcher.close();
  });
});
