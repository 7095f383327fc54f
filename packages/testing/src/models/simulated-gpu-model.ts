import type { ModelDefinition } from '../model-definition.js';
import { runLazily, type SimulatedGpu } from '../simulated-gpu.js';

/**
 * `simulated_gpu`: FP32 INPUT0 with dims [-1] (so shape [rows, n]), OUTPUT0 = INPUT0 × 2. Every
 * execution waits for the one slot of `gpu` and holds it for `baseMs + perRowMs × rows`, which makes
 * batching pay off the way it does on a GPU. For the batcher benchmark and batching tests.
 */
export function simulatedGpuModel(gpu: SimulatedGpu, maxBatchSize: number): ModelDefinition {
  return {
    name: 'simulated_gpu',
    maxBatchSize,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1] }],
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
    async execute(request, context) {
      const input = request.input('INPUT0');
      // Waiting for the slot is ModelStatistics' queue time; holding it is compute_infer.
      await runLazily(gpu, request.batchSize, context, context.computeStarted);
      const values = input.data as Float32Array;
      const doubled = new Float32Array(values.length);
      for (let i = 0; i < values.length; i++) doubled[i] = (values[i] as number) * 2;
      return [{ name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, data: doubled }];
    },
  };
}
