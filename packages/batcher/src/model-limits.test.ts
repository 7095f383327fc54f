import { ErrorCode } from '@infergate/core';
import { describe, expect, it, vi } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

const rows = (count: number, seed = 0) => requestOf('m', fp32('INPUT0', count, 1, seed));

describe("the model's max_batch_size", () => {
  it('is read once per model and caps the batch', async () => {
    const transport = new EchoTransport({ hold: true });
    const getModelConfig = vi.fn(async () => ({ maxBatchSize: 3 }));
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, getModelConfig });
    const answers = Array.from({ length: 8 }, (_, seed) => batcher.infer(rows(1, seed)));
    while (batcher.stats().items < 8) {
      await new Promise((resolve) => setImmediate(resolve));
      transport.release();
    }
    transport.release();
    await Promise.all(answers);
    expect(getModelConfig).toHaveBeenCalledTimes(1);
    expect(getModelConfig).toHaveBeenCalledWith('m', '');
    expect(Math.max(...transport.calls.map((call) => call.rows))).toBe(3);
    await batcher.close();
  });

  it('uses an explicit per-model limit without any lookup', async () => {
    const getModelConfig = vi.fn(async () => ({ maxBatchSize: 64 }));
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, { models: { m: { maxBatchSize: 2 } }, getModelConfig });
    await expect(batcher.infer(rows(3))).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await batcher.infer(rows(2));
    expect(getModelConfig).not.toHaveBeenCalled();
    expect(transport.calls).toHaveLength(1);
    await batcher.close();
  });

  it('passes calls straight through for a model that does not batch (max_batch_size 0)', async () => {
    const transport = new EchoTransport();
    const batcher = createMicroBatcher(transport, {
      client: { modelConfig: async () => ({ maxBatchSize: 0 }) },
    });
    await Promise.all([batcher.infer(rows(1)), batcher.infer(rows(1))]);
    expect(batcher.stats()).toMatchObject({ passedThrough: 2, batches: 0 });
    await batcher.close();
  });

  it('sends a call larger than maxBatchSize (but within the model limit) alone', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxBatchSize: 4, maxInFlightBatches: 1 });
    const answers = [
      batcher.infer(rows(1, 0)),
      batcher.infer(rows(1, 1)),
      batcher.infer(rows(9, 2)),
      batcher.infer(rows(1, 3)),
    ];
    while (transport.held > 0 || batcher.stats().queued > 0) {
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    // FIFO within a tenant: the 9-row call waits its turn, then goes by itself.
    expect(transport.calls.map((call) => call.rows)).toEqual([1, 1, 9, 1]);
    await batcher.close();
  });

  it('passes through when the lookup fails, and asks again next time', async () => {
    const getModelConfig = vi.fn(async () => {
      throw new Error('no such model');
    });
    const batcher = createMicroBatcher(new EchoTransport(), { getModelConfig });
    await batcher.infer(rows(1));
    await batcher.infer(rows(1));
    expect(getModelConfig).toHaveBeenCalledTimes(2);
    expect(batcher.stats().passedThrough).toBe(2);
    await batcher.close();
  });
});
