import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBurst } from './demo.js';
import { type InferenceService, startInferenceService } from './service.js';

let replicas: TestServer[];
let service: InferenceService;

beforeAll(async () => {
  replicas = await Promise.all([
    startTestServer({ simulatedGpu: { baseMs: 5, perRowMs: 0.05 } }),
    startTestServer({ simulatedGpu: { baseMs: 5, perRowMs: 0.05 } }),
  ]);
  service = await startInferenceService({ tritonUrls: replicas.map((replica) => replica.url) });
});

afterAll(async () => {
  await service.close();
  await Promise.all(replicas.map((replica) => replica.stop()));
});

describe('node-service example', () => {
  it('answers every request correctly and batches concurrent ones across two replicas', async () => {
    const result = await sendBurst(service, 200);
    expect(result.correct).toBe(200);
    const { batcher, breakers } = result.stats;
    expect(batcher.items).toBe(200);
    expect(batcher.rows).toBe(200);
    // Two batches in flight at most: 200 concurrent calls cannot go one by one.
    expect(batcher.batches).toBeLessThan(100);
    expect(batcher.meanBatchSize).toBeGreaterThan(2);
    const executedRows = replicas.reduce((sum, replica) => sum + replica.stats('simulated_gpu').rows, 0);
    expect(executedRows).toBe(200);
    expect(Object.values(breakers).map((state) => state.kind)).toEqual(['closed', 'closed']);
  });

  it('keeps serving when one replica fails: the router falls back within the group', async () => {
    replicas[0]?.faults.set('simulated_gpu', { code: 'UNAVAILABLE', times: 3 });
    const result = await sendBurst(service, 20);
    expect(result.correct).toBe(20);
  });
});
