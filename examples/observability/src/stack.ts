import { createMicroBatcher } from '@infergate/batcher';
import {
  applyInterceptors,
  createGrpcTransport,
  createTritonClient,
  type TritonClient,
} from '@infergate/core';
import { type CostTracker, costInterceptor, createCostTracker } from '@infergate/cost';
import { createInferRouter } from '@infergate/router';

export interface Stack {
  readonly client: TritonClient;
  readonly tracker: CostTracker;
  close(): Promise<void>;
}

/**
 * The full client stack over Triton endpoints: router → cost → batcher → gRPC. The router picks
 * an endpoint; each endpoint's calls are charged GPU time, batched, and sent over its own channel.
 */
export function createStack(tritonUrls: readonly string[]): Stack {
  const tracker = createCostTracker({
    budgets: [{ id: 'daily', scope: ['tenant'], window: 'day', hardLimitUsd: 5 }],
    gpuPrices: [{ model: 'simulated_gpu', usdPerGpuHour: 2.5 }],
  });
  const endpoints = tritonUrls.map((url, index) => {
    const grpc = createGrpcTransport({ url });
    // One batch in flight per endpoint: calls that arrive while it runs gather into the next one.
    const batcher = createMicroBatcher(grpc, {
      maxInFlightBatches: 1,
      models: { simulated_gpu: { maxBatchSize: 16 } },
    });
    const transport = applyInterceptors(batcher, [costInterceptor({ tracker, endpoint: url })]);
    return { name: `triton-${index}`, grpc, batcher, transport };
  });
  const router = createInferRouter({
    name: 'triton',
    targets: endpoints.map(({ name, transport }) => ({ name, transport })),
  });
  const client = createTritonClient({ transport: router });
  return {
    client,
    tracker,
    async close() {
      await client.close();
      await router.close();
      for (const endpoint of endpoints) {
        await endpoint.batcher.close();
        await endpoint.grpc.close();
      }
      await tracker.close();
    },
  };
}
