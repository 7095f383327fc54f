import type { ModelDefinition } from '../model-definition.js';

/**
 * `add_sub`: Triton's classic example. FP32 INPUT0 and INPUT1 with dims [16] and max_batch_size 64,
 * so (as in Triton) every request carries the batch dimension: shape [n,16] with 1 ≤ n ≤ 64; a bare
 * [16] is INVALID_ARGUMENT. OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 − INPUT1.
 */
export function addSubModel(): ModelDefinition {
  return {
    name: 'add_sub',
    maxBatchSize: 64,
    inputs: [
      { name: 'INPUT0', datatype: 'FP32', dims: [16] },
      { name: 'INPUT1', datatype: 'FP32', dims: [16] },
    ],
    outputs: [
      { name: 'OUTPUT0', datatype: 'FP32', dims: [16] },
      { name: 'OUTPUT1', datatype: 'FP32', dims: [16] },
    ],
    execute(request) {
      const a = request.input('INPUT0').data as Float32Array;
      const b = request.input('INPUT1').data as Float32Array;
      const sum = new Float32Array(a.length);
      const difference = new Float32Array(a.length);
      for (let i = 0; i < a.length; i++) {
        sum[i] = (a[i] as number) + (b[i] as number);
        difference[i] = (a[i] as number) - (b[i] as number);
      }
      const shape = request.input('INPUT0').shape;
      return [
        { name: 'OUTPUT0', datatype: 'FP32', shape, data: sum },
        { name: 'OUTPUT1', datatype: 'FP32', shape, data: difference },
      ];
    },
  };
}
