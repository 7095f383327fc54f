import type { EncodedTensor } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { EchoTransport, fp32, type RecordedRpc, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';

describe('tenant fairness', () => {
  it("a flooding tenant does not starve another: B's calls finish within the first batches", async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, maxBatchSize: 64 });
    const finishedAt: Record<string, number[]> = { a: [], b: [] };
    const track = (tenant: 'a' | 'b', seed: number) =>
      batcher.infer(requestOf('m', fp32('INPUT0', 1, 2, seed)), { tenant }).then(() => {
        finishedAt[tenant]?.push(transport.calls.length);
      });
    const answers = [
      ...Array.from({ length: 500 }, (_, seed) => track('a', seed)),
      ...Array.from({ length: 20 }, (_, seed) => track('b', 1000 + seed)),
    ];
    while (transport.calls.length < 20 && (transport.held > 0 || batcher.stats().queued > 0)) {
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    // Batch 1 is A's first call, sent at once; batch 2 already carries all of B.
    expect(Math.max(...(finishedAt.b as number[]))).toBeLessThanOrEqual(3);
    expect(transport.calls[1]?.rows).toBe(64);
    expect(batcher.stats().items).toBe(520);
    await batcher.close();
  });

  it('shares rows by tenant weight', async () => {
    const transport = new EchoTransport({ hold: true });
    const batcher = createMicroBatcher(transport, {
      maxInFlightBatches: 1,
      tenants: { gold: { weight: 3 } },
    });
    const tenantOf = new Map<number, string>();
    const answers: Promise<unknown>[] = [batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, -1)))];
    for (let seed = 0; seed < 100; seed++) {
      for (const tenant of ['gold', 'free']) {
        const value = tenant === 'gold' ? seed : 1000 + seed;
        tenantOf.set(value * 1000, tenant);
        answers.push(batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, value)), { tenant }));
      }
    }
    transport.release();
    await new Promise((resolve) => setImmediate(resolve));
    const second = transport.calls[1] as RecordedRpc;
    const values = new Float32Array((second.request.inputs[0] as EncodedTensor).raw.slice().buffer);
    const gold = Array.from(values).filter((value) => tenantOf.get(value) === 'gold').length;
    expect(values.length).toBe(64);
    expect(gold).toBe(48);
    while (transport.held > 0 || batcher.stats().queued > 0) {
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    await batcher.close();
  });

  // Not a bug, pinned: a tenant's weight is read as `tenants[tenant]?.weight ?? 1`, and no member of
  // Object.prototype (nor of what those members are) has a `weight`, so an unlisted tenant named
  // `constructor`, `toString` or `__proto__` weighs 1, and a listed one its own weight.
  it('weighs a tenant named like a member of every object by its own entry only', async () => {
    const share = async (tenants: Record<string, { weight: number }>, first: string, second: string) => {
      const transport = new EchoTransport({ hold: true });
      const batcher = createMicroBatcher(transport, { maxInFlightBatches: 1, tenants });
      const tenantOf = new Map<number, string>();
      const answers: Promise<unknown>[] = [batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, -1)))];
      for (let seed = 0; seed < 100; seed++) {
        for (const tenant of [first, second]) {
          const value = tenant === first ? seed : 1000 + seed;
          tenantOf.set(value * 1000, tenant);
          answers.push(batcher.infer(requestOf('m', fp32('INPUT0', 1, 1, value)), { tenant }));
        }
      }
      transport.release();
      await new Promise((resolve) => setImmediate(resolve));
      const batch = transport.calls[1] as RecordedRpc;
      const values = new Float32Array((batch.request.inputs[0] as EncodedTensor).raw.slice().buffer);
      const firstRows = Array.from(values).filter((value) => tenantOf.get(value) === first).length;
      while (transport.held > 0 || batcher.stats().queued > 0) {
        transport.release();
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(answers);
      await batcher.close();
      return [firstRows, values.length];
    };
    expect(await share({ constructor: { weight: 3 } }, 'constructor', 'toString')).toEqual([48, 64]);
    expect(await share({}, 'constructor', '__proto__')).toEqual([32, 64]);
    expect(await share({ hasOwnProperty: { weight: 3 } }, 'valueOf', 'hasOwnProperty')).toEqual([16, 64]);
  });
});
