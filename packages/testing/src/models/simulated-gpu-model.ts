import { answerAfter } from '../internal/early-answer.js';
import type { ExecuteOutput, ModelDefinition } from '../model-definition.js';
import { runLazily, type SimulatedGpu } from '../simulated-gpu.js';

/** Whether a Float32Array's bytes are already the wire's little-endian layout. */
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * `simulated_gpu`: FP32 INPUT0 with dims [-1] (so shape [rows, n]), OUTPUT0 = INPUT0 × 2. Every
 * execution waits for the one slot of `gpu` and holds it for `baseMs + perRowMs × rows`, which makes
 * batching pay off the way it does on a GPU. For the batcher benchmark and batching tests.
 *
 * The output is computed while the execution holds the slot (or waits for it), as a GPU computes
 * during its execution, and handed back when the execution ends: after the end only the answer is
 * left to send. The slot's clock starts before this work, so the execution still takes its cost.
 * Where the call's transport can hold a built answer (gRPC ModelInfer), the outputs are handed over
 * at once with the execution's end as the moment they may leave (decision 0023): the answer's bytes
 * are ready when the execution ends, as Triton's are microseconds after it.
 */
export function simulatedGpuModel(gpu: SimulatedGpu, maxBatchSize: number): ModelDefinition {
  return {
    name: 'simulated_gpu',
    maxBatchSize,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1] }],
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
    async execute(request, context) {
      const input = request.input('INPUT0');
      // Waiting for the slot is ModelStatistics' queue time; holding it is compute_infer. A free slot
      // is taken (its clock started) before `runLazily` returns.
      const executed = runLazily(gpu, request.batchSize, context, context.computeStarted);
      let output: ExecuteOutput;
      try {
        const values = input.data as Float32Array;
        const doubled = new Float32Array(values.length);
        for (let i = 0; i < values.length; i++) doubled[i] = (values[i] as number) * 2;
        // Little-endian already: handed over as the wire's bytes, not encoded again after the end.
        output = littleEndian
          ? { name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, raw: new Uint8Array(doubled.buffer) }
          : { name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, data: doubled };
      } catch (error) {
        executed.catch(() => {});
        throw error;
      }
      // The pipeline holds the answer until the execution ends (and reports it if it never runs).
      if (answerAfter(context, executed)) return [output];
      await executed;
      return [output];
    },
  };
}
