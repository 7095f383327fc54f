// Builds the Triton workload's request for a model: FP32 inputs with a batch dimension, one call per
// `rows` rows. For `simulated_gpu` (OUTPUT0 = 2 × INPUT0) every answer is checked row by row, which
// proves the batcher hands each caller exactly its own rows.
import type { InferResult, InputTensor, TritonClient } from '@infergate/core';

export interface ModelInputs {
  model: string;
  /** Triton's max_batch_size (0: the model does not batch, calls pass the batcher unbatched). */
  maxBatchSize: number;
  /** Inputs for one call of `rows` rows, values derived from `id`. */
  build(rows: number, id: number): InputTensor[];
  /** Checks an answer when the model's semantics are known; true when right (or unknown). */
  check(result: InferResult, rows: number, id: number): boolean;
}

/** Variable dimensions (-1) are sent with this many elements. */
const VARIABLE_DIM = 16;

/** Reads the model's metadata and config and prepares FP32 inputs for it. */
export async function modelInputs(client: TritonClient, model: string): Promise<ModelInputs> {
  const [metadata, config] = await Promise.all([client.modelMetadata(model), client.modelConfig(model)]);
  const maxBatchSize = config.maxBatchSize;
  const specs = metadata.inputs.map((input) => {
    if (input.datatype !== 'FP32')
      throw new Error(
        `model '${model}' input '${input.name}' is ${input.datatype}; the demo workload sends FP32 only`,
      );
    // Metadata of a batching model lists the batch dimension first (-1): the demo fills it with rows.
    const dims = (maxBatchSize > 0 ? input.shape.slice(1) : input.shape).map((dim) =>
      dim < 0 ? VARIABLE_DIM : dim,
    );
    return { name: input.name, dims, perRow: dims.reduce((a, b) => a * b, 1) };
  });
  if (specs.length === 0) throw new Error(`model '${model}' has no inputs`);
  const doubles = model === 'simulated_gpu';
  return {
    model,
    maxBatchSize,
    build(rows, id) {
      const batch = maxBatchSize > 0 ? rows : 1;
      return specs.map((spec) => {
        const data = new Float32Array(batch * spec.perRow);
        // Each row starts with a value unique to the call and row; the rest is a small ramp.
        for (let row = 0; row < batch; row++) {
          const offset = row * spec.perRow;
          data[offset] = (id % 1_000_000) + row / 8;
          for (let i = 1; i < spec.perRow; i++) data[offset + i] = i / 16;
        }
        return {
          name: spec.name,
          datatype: 'FP32',
          shape: maxBatchSize > 0 ? [batch, ...spec.dims] : spec.dims,
          data,
        };
      });
    },
    check(result, rows, id) {
      if (!doubles) return true;
      const out = result.output('OUTPUT0').data as Float32Array;
      const perRow = out.length / rows;
      for (let row = 0; row < rows; row++) {
        if (out[row * perRow] !== 2 * ((id % 1_000_000) + row / 8)) return false;
      }
      return true;
    },
  };
}
