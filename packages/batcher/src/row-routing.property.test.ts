import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EchoTransport } from './internal/testing/echo-transport.js';
import { callsArbitrary, sameTensor } from './internal/testing/random-calls.js';
import { createMicroBatcher } from './micro-batcher.js';

describe('row routing (property)', () => {
  it('returns every caller exactly its own rows, whatever the mix of layouts, sizes and concurrency', async () => {
    await fc.assert(
      fc.asyncProperty(
        callsArbitrary('m', { inputNames: ['A', 'B'], maxCalls: 40, maxRows: 5 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('adaptive' as const, 'fixed' as const),
        async (calls, maxBatchSize, maxInFlightBatches, flush) => {
          const transport = new EchoTransport();
          const batcher = createMicroBatcher(transport, {
            maxBatchSize,
            maxInFlightBatches,
            flush,
            maxQueueDelayMs: 1,
          });
          const responses = await Promise.all(
            calls.map(({ request, tenant }) => batcher.infer(request, { tenant })),
          );
          responses.forEach((response, index) => {
            const { inputs } = (calls[index] as (typeof calls)[number]).request;
            expect(response.outputs).toHaveLength(inputs.length);
            inputs.forEach((input, position) => {
              expect(sameTensor(response.outputs[position], input)).toBe(true);
            });
          });
          for (const rpc of transport.calls) expect(rpc.rows).toBeLessThanOrEqual(Math.max(maxBatchSize, 5));
          expect(batcher.stats().items).toBe(calls.length);
          await batcher.close();
        },
      ),
      { numRuns: 60 },
    );
  });
});
