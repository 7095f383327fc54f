import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const FAKE = {
  toFake: [
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'performance',
    'Date',
  ],
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

  it('adaptive (eager, a server that batches): gathers while every slot is busy, sends when one frees', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 2,
      serverBatching: 'defer',
      getModelConfig: async () => ({ maxBatchSize: 64, dynamicBatching: { maxQueueDelayUs: 100 } }),
    });
    const first = [batcher.infer(one(1)), batcher.infer(one(2))];
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 1]);
    const waiting = [3, 4, 5, 6, 7].map((seed) => batcher.infer(one(seed)));
    await vi.advanceTimersByTimeAsync(50);
    expect(transport.calls).toHaveLength(2);
    expect(batcher.stats().queued).toBe(5);
    expect(batcher.stats().lanes.m?.mode).toBe('eager');
    transport.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 1, 5]);
    transport.release();
    await Promise.all([...first, ...waiting]);
    await batcher.close();
  });

  it('adaptive (fill): a further slot takes a full batch at once and a partial one after maxQueueDelayMs', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 2, maxBatchSize: 4 });
    const answers = [1, 2, 3, 4, 5, 6].map((seed) => batcher.infer(one(seed)));
    // The first goes alone; the next four make a full batch, which takes the second slot.
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 4]);
    answers.push(batcher.infer(one(7)));
    await vi.advanceTimersByTimeAsync(9.5);
    expect(transport.calls).toHaveLength(2);
    // A slot frees, but the other batch is still in flight: the partial batch would wait behind
    // it on the server, so it waits here until its oldest call has waited maxQueueDelayMs.
    transport.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(0.5);
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 4, 2]);
    transport.release();
    await vi.advanceTimersByTimeAsync(0);
    await Promise.all(answers);
    expect(batcher.stats().lanes.m?.mode).toBe('fill');
    await batcher.close();
  });

  it('adaptive (fill): closed-loop callers come back and fill one batch instead of alternating halves', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1 });
    let sent = 0;
    const worker = async () => {
      for (let round = 0; round < 6; round++) await batcher.infer(one(sent++));
    };
    const workers = Promise.all(Array.from({ length: 8 }, worker));
    for (let round = 0; round < 7; round++) {
      await vi.advanceTimersByTimeAsync(2);
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    // 1 alone, 7 that queued behind it, the first caller again (nothing learned yet); once the
    // first answer's window has shown its caller coming back, the batch waits for the others too,
    // and the later batches carry all 8 (without that: 1, 7, 1, 7, ...). The last 7: the caller
    // that went first has finished its rounds.
    expect(transport.calls.slice(0, 4).map((call) => call.rows)).toEqual([1, 7, 1, 8]);
    for (let round = 0; round < 10 && sent < 48; round++) {
      await vi.advanceTimersByTimeAsync(2);
      transport.release();
    }
    await vi.advanceTimersByTimeAsync(20);
    transport.release();
    await workers;
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 7, 1, 8, 8, 8, 8, 7]);
    const lane = batcher.stats().lanes.m;
    expect(lane?.mode).toBe('fill');
    expect(lane?.returnShare).toBeGreaterThan(0.9);
    await batcher.close();
  });

  it('adaptive (fill): a held batch that fills is sent and leaves no wake-up timer behind', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 1,
      models: { m: { maxBatchSize: 8 } },
    });
    let running = true;
    const callers = Array.from({ length: 8 }, (_, seed) =>
      (async () => {
        while (running) await batcher.infer(one(seed));
      })(),
    );
    // Closed-loop callers: the batcher learns the round trip and that every caller comes back, so
    // each answered batch's callers are held for until all eight are back, then go as one batch.
    for (let round = 0; round < 6; round++) {
      await vi.advanceTimersByTimeAsync(2);
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(transport.calls.slice(-3).map((call) => call.rows)).toEqual([8, 8, 8]);
    expect(transport.held).toBe(1);
    // The full batch is in flight and nothing is queued: no timer is left to wake the process while
    // it waits (the hold's wake-up used to stay armed and fire once per batch, for nothing).
    expect(batcher.stats().queued).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    // The callers come back within the turn of the answer, so the hold never arms a timer at all
    // (one armed and cleared per batch still wakes the process when it falls due).
    const armed = vi.spyOn(globalThis, 'setTimeout');
    for (let round = 0; round < 3; round++) {
      await vi.advanceTimersByTimeAsync(2);
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(transport.calls.slice(-3).map((call) => call.rows)).toEqual([8, 8, 8]);
    expect(armed).not.toHaveBeenCalled();
    armed.mockRestore();
    running = false;
    transport.release();
    await vi.advanceTimersByTimeAsync(20);
    transport.release();
    await Promise.all(callers);
    await batcher.close();
  });

  it('adaptive (fill): after a pause, callers split into two groups merge again in one batch', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 2,
      models: { m: { maxBatchSize: 8 } },
    });
    let running = true;
    const start = () =>
      Array.from({ length: 8 }, (_, seed) =>
        (async () => {
          while (running) await batcher.infer(one(seed));
        })(),
      );
    let callers = start();
    for (let round = 0; round < 6; round++) {
      await vi.advanceTimersByTimeAsync(2);
      transport.release();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(transport.calls.at(-1)?.rows).toBe(8);
    // The callers pause: the last batch's answer brings nobody back, and the learned share drops.
    running = false;
    transport.release();
    await Promise.all(callers);
    await vi.advanceTimersByTimeAsync(50);
    running = true;
    const before = transport.calls.length;
    callers = start();
    // The first caller goes alone; the other seven wait for it until their delay is up, then take
    // the second slot: two groups, 1 and 7.
    await vi.advanceTimersByTimeAsync(10);
    expect(transport.calls.slice(before).map((call) => call.rows)).toEqual([1, 7]);
    transport.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(batcher.stats().lanes.m?.returnShare).toBeLessThan(0.9);
    // The seven are answered; all of them come back in the same turn and join the one waiting. With
    // the share under 1, sending once the share's count had arrived left one or two behind (7, 1).
    transport.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.slice(before).map((call) => call.rows)).toEqual([1, 7, 8]);
    running = false;
    for (let round = 0; round < 10 && transport.held > 0; round++) {
      transport.release();
      await vi.advanceTimersByTimeAsync(20);
    }
    await Promise.all(callers);
    await batcher.close();
  });

  it('adaptive (measure): eager in front of a server that batches, fill once its statistics show queueing', async () => {
    const transport = new EchoTransport();
    let counters = { requests: 0, executions: 0, queueUs: 0, computeUs: 0 };
    const reads: number[] = [];
    const batcher = createMicroBatcher(transport, {
      statsIntervalMs: 5,
      // Triton's config as TritonClient.modelConfig() returns it.
      getModelConfig: async () => ({
        maxBatchSize: 64,
        schedulingChoice: {
          case: 'dynamicBatching',
          value: { maxQueueDelayMicroseconds: 100n, preferredBatchSize: [] },
        },
      }),
      getModelStatistics: async (_model, _version, timeoutMs) => {
        reads.push(timeoutMs);
        return counters;
      },
    });
    await batcher.infer(one(1));
    await vi.advanceTimersByTimeAsync(0);
    expect(batcher.stats().lanes.m).toMatchObject({ mode: 'eager', server: 'unknown' });
    // 100 requests, each run alone, waited 900 µs each in the server's queue; executions take 500 µs.
    counters = { requests: 100, executions: 100, queueUs: 90_000, computeUs: 50_000 };
    await batcher.infer(one(2));
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toHaveLength(1); // within the interval: not read again
    await vi.advanceTimersByTimeAsync(5);
    await batcher.infer(one(3));
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toEqual([1000, 1000]); // each read bounded, by at least 1 s
    expect(batcher.stats().lanes.m).toMatchObject({ mode: 'fill', server: 'saturated' });
    await batcher.close();
  });

  it('adaptive (measure): a failed statistics read keeps the mode and is tried again', async () => {
    const transport = new EchoTransport();
    let reads = 0;
    const batcher = createMicroBatcher(transport, {
      statsIntervalMs: 5,
      getModelConfig: async () => ({ maxBatchSize: 64, dynamicBatching: { maxQueueDelayUs: 0 } }),
      getModelStatistics: async () => {
        reads += 1;
        throw new Error('statistics unavailable');
      },
    });
    await batcher.infer(one(1));
    await vi.advanceTimersByTimeAsync(5);
    await batcher.infer(one(2));
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(2);
    expect(batcher.stats().lanes.m).toMatchObject({ mode: 'eager', server: 'unknown' });
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

  it('adaptive (fill): a load step (a failover doubling the callers) gets full batches on both slots at once', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 2,
      models: { m: { maxBatchSize: 8 } },
    });
    let running = true;
    const callers: Promise<void>[] = [];
    const start = (count: number) => {
      for (let caller = 0; caller < count; caller++) {
        const seed = callers.length;
        callers.push(
          (async () => {
            while (running) await batcher.infer(one(seed));
          })(),
        );
      }
    };
    // Four closed-loop callers: the batcher learns the round trip and that every caller comes back.
    start(4);
    for (let round = 0; round < 6; round++) {
      await vi.advanceTimersByTimeAsync(2);
      transport.release();
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.at(-1)?.rows).toBe(4);
    expect(transport.held).toBe(1);
    // The step: twelve more callers while that batch is in flight. Without any time passing, the
    // first eight make a full batch that takes the second slot.
    const before = transport.calls.length;
    start(12);
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.slice(before).map((call) => call.rows)).toEqual([8]);
    expect(transport.held).toBe(2);
    // The first batch answers: its four callers join the four queued ones, a full batch at once.
    transport.release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(transport.calls.slice(before).map((call) => call.rows)).toEqual([8, 8]);
    expect(transport.held).toBe(2);
    // From then on every batch is full and both slots stay busy.
    for (let round = 0; round < 4; round++) {
      transport.release(1);
      await vi.advanceTimersByTimeAsync(0);
      expect(transport.calls.at(-1)?.rows).toBe(8);
      expect(transport.held).toBe(2);
    }
    expect(batcher.stats().lanes.m?.returnShare).toBeGreaterThan(0.9);
    running = false;
    for (let round = 0; round < 10 && transport.held > 0; round++) {
      transport.release();
      await vi.advanceTimersByTimeAsync(20);
    }
    await Promise.all(callers);
    await batcher.close();
  });
});
