import type { ModelDefinition } from '../model-definition.js';

/**
 * `identity`: OUTPUT0 is INPUT0, byte for byte. Its config says TYPE_FP32 with dims [-1] and
 * max_batch_size 64, but unlike a real Triton model it accepts any datatype and any shape (BYTES,
 * 0-d `[]`, empty tensors, no batch-size limit) and echoes the request's datatype and shape. The
 * raw bytes pass straight through, so large tensors cost one copy into the response.
 */
export function identityModel(): ModelDefinition {
  return {
    name: 'identity',
    maxBatchSize: 64,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1], anyDatatype: true, anyShape: true }],
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
    execute(request) {
      const input = request.input('INPUT0');
      return [{ name: 'OUTPUT0', datatype: input.datatype, shape: input.shape, raw: input.raw }];
    },
  };
}
