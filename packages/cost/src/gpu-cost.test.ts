import {
  BATCH_SHARE_CONTEXT,
  createTritonClient,
  type InferRequest,
  type InferTransport,
  type ModelStatistics,
} from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { describe, expect, it } from 'vitest';
import { ComputeMeter } from './compute-meter.js';
import { CostTracker } from './cost-tracker.js';
import { GpuPriceTable, gpuShareUsd } from './gpu-cost.js';
import { costInterceptor } from './triton-cost-interceptor.js';

const HOUR_NS = 3.6e12;

function request(rows: number): InferRequest {
  return {
    model: 'simulated_gpu',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [rows, 4], data: new Uint8Array(rows * 16) }],
  } as unknown as InferRequest;
}

describe('GPU cost', () => {
  it('charges each call its rows’ share of the execution', () => {
    const price = { usdPerGpuHour: 3.6 };
    expect(gpuShareUsd(price, { model: 'm', computeNs: HOUR_NS / 1000 })).toBeCloseTo(0.0036, 12);
    expect(gpuShareUsd(price, { model: 'm', rows: 3, batchRows: 12, computeNs: HOUR_NS / 1000 })).toBeCloseTo(
      0.0009,
      12,
    );
    expect(gpuShareUsd({ usdPerGpuHour: 2, gpus: 4 }, { model: 'm', computeNs: BigInt(HOUR_NS) })).toBe(8);
  });

  it('looks prices up by endpoint + model, model, endpoint, then default', () => {
    const table = new GpuPriceTable([
      { usdPerGpuHour: 1 },
      { endpoint: 'a:1', usdPerGpuHour: 2 },
      { model: 'llm', usdPerGpuHour: 3 },
      { endpoint: 'a:1', model: 'llm', usdPerGpuHour: 4 },
    ]);
    expect(table.lookup('llm', 'a:1')?.usdPerGpuHour).toBe(4);
    expect(table.lookup('llm', 'b:1')?.usdPerGpuHour).toBe(3);
    expect(table.lookup('resnet', 'a:1')?.usdPerGpuHour).toBe(2);
    expect(table.lookup('resnet', undefined)?.usdPerGpuHour).toBe(1);
  });

  it('the interceptor charges tenants from the batch share, releasing on failure', async () => {
    const tracker = new CostTracker({
      gpuPrices: [{ model: 'simulated_gpu', usdPerGpuHour: 3.6 }],
      budgets: [{ id: 't', scope: ['tenant'], window: 'day', hardLimitUsd: 10 }],
    });
    let fail = false;
    const next: InferTransport = {
      async infer(inferRequest) {
        if (fail) throw new Error('boom');
        return { model: inferRequest.model, modelVersion: '1', id: '', outputs: [], parameters: {} };
      },
      async *stream() {},
    };
    const transport = costInterceptor({ tracker: tracker })(next);
    const share = (rows: number) =>
      new Map([[BATCH_SHARE_CONTEXT, { rows, batchRows: 12, computeNs: HOUR_NS / 1000 }]]);
    await transport.infer(request(3), { tenant: 'a', context: share(3) });
    await transport.infer(request(9), { tenant: 'b', context: share(9) });
    expect((await tracker.spend('t', { tenant: 'a' })).spentUsd).toBeCloseTo(0.0009, 9);
    expect((await tracker.spend('t', { tenant: 'b' })).spentUsd).toBeCloseTo(0.0027, 9);
    fail = true;
    await expect(transport.infer(request(1), { tenant: 'a' })).rejects.toThrow('boom');
    expect((await tracker.spend('t', { tenant: 'a' })).reservedUsd).toBe(0);
  });

  it('measures compute per row from Triton statistics deltas (reference server, simulated_gpu)', async () => {
    const server = await startTestServer();
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const meter = new ComputeMeter({ source: client, model: 'simulated_gpu' });
      await meter.sample(); // baseline
      const tracker = new CostTracker({ gpuPrices: [{ usdPerGpuHour: 3.6 }] });
      const tenants: string[] = [];
      tracker.on('settled', (entry) => tenants.push(entry.tenant ?? ''));
      const meters = new Map([['simulated_gpu', meter]]);
      const metered = createTritonClient({
        url: server.url,
        enableGpuIpc: false,
        interceptors: [costInterceptor({ tracker: tracker, meters })],
      });
      const data = new Float32Array(8);
      await metered.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 4], data }], {
        tenant: 'x',
      });
      const sample = await meter.sample();
      expect(sample?.rows).toBe(2);
      expect(sample?.nsPerRow).toBeGreaterThan(0);
      await metered.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 4], data }], {
        tenant: 'y',
      });
      const report = await tracker.report({ groupBy: ['tenant'] });
      const y = report.rows.find((row) => row.tenant === 'y');
      expect(y?.costUsd).toBeCloseTo((3.6 * ((sample?.nsPerRow ?? 0) * 2)) / HOUR_NS, 9);
      expect(tenants).toEqual(['x', 'y']);
      await metered.close();
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('ComputeMeter divides compute_infer by rows and ignores a server restart', async () => {
    let stats = { ns: 0n, rows: 0, executions: 0 };
    const source = {
      async modelStatistics(): Promise<ModelStatistics[]> {
        return [
          {
            name: 'm',
            inferenceCount: stats.rows,
            executionCount: stats.executions,
            inference: { computeInfer: { count: stats.executions, ns: stats.ns, ms: 0 } },
          } as unknown as ModelStatistics,
        ];
      },
    };
    const meter = new ComputeMeter({ source, model: 'm' });
    expect(await meter.sample()).toBeUndefined();
    stats = { ns: 8_000_000n, rows: 16, executions: 2 };
    expect(await meter.sample()).toMatchObject({ rows: 16, executions: 2, nsPerRow: 500_000 });
    stats = { ns: 1n, rows: 1, executions: 1 };
    expect(await meter.sample()).toBeUndefined();
  });
});
