import { ErrorCode } from '@infergate/core';
import { describe, expect, it, vi } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

// Per-model records are looked up by the request's model name. Names that are also keys of every
// object (`constructor`, `toString`, `__proto__`, …) must find only what the record itself holds:
// Object.prototype's member read as an explicit limit skipped the model's own max_batch_size.

const NAMES = ['constructor', 'toString', 'hasOwnProperty', '__proto__'];
const rows = (model: string, count: number, seed = 0) => requestOf(model, fp32('INPUT0', count, 1, seed));

describe('models named like members of every object', () => {
  for (const name of NAMES) {
    it(`reads max_batch_size of a model named ${name} and holds calls to it`, async () => {
      const getModelConfig = vi.fn(async () => ({ maxBatchSize: 2 }));
      const transport = new EchoTransport();
      const batcher = createMicroBatcher(transport, {
        getModelConfig,
        models: { other: { maxBatchSize: 8 } },
      });
      try {
        await expect(batcher.infer(rows(name, 3))).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
        expect(getModelConfig).toHaveBeenCalledWith(name, '');
        await batcher.infer(rows(name, 2));
        expect(transport.calls.map((call) => call.rows)).toEqual([2]);
      } finally {
        await batcher.close();
      }
    });
  }

  it('takes an explicit limit of a model named constructor or toString from the models option', async () => {
    const getModelConfig = vi.fn(async () => ({ maxBatchSize: 64 }));
    const batcher = createMicroBatcher(new EchoTransport(), {
      getModelConfig,
      models: { constructor: { maxBatchSize: 1 }, toString: { maxBatchSize: 1 } },
    });
    try {
      for (const name of ['constructor', 'toString'])
        await expect(batcher.infer(rows(name, 2))).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
      expect(getModelConfig).not.toHaveBeenCalled();
    } finally {
      await batcher.close();
    }
  });

  it('stats() has an own lanes entry per model, also one named __proto__', async () => {
    const batcher = createMicroBatcher(new EchoTransport());
    try {
      for (const name of NAMES) await batcher.infer(rows(name, 1));
      const { lanes } = batcher.stats();
      expect(Object.getPrototypeOf(lanes)).toBe(Object.prototype);
      expect(Object.keys(lanes).sort()).toEqual([...NAMES].sort());
      expect(Object.keys(JSON.parse(JSON.stringify(lanes))).sort()).toEqual([...NAMES].sort());
    } finally {
      await batcher.close();
    }
  });
});
