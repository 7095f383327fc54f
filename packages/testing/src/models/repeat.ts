import { integerParameter } from '../internal/parameters.js';
import { sleep } from '../internal/sleep.js';
import type { ModelDefinition } from '../model-definition.js';
import { RpcError } from '../rpc-error.js';

/**
 * `repeat`: a decoupled model (Triton's repeat_int32 example). One response per element of `IN`
 * (INT32 `[-1]`): `OUT` INT32 `[1]` = the element, `IDX` UINT32 `[1]` = its index. Optional `DELAY`
 * UINT32 `[-1]`: ms to wait before each response (missing entries: 0). Optional `WAIT` UINT32 `[1]`: ms to wait
 * after the last response. Request parameter `error_after` (k): after k responses, fail the request
 * with "repeat: failing after k responses as asked". An empty `IN` sends no response (only the empty
 * final response, when asked for). ModelStreamInfer only.
 */
export function repeatModel(): ModelDefinition {
  return {
    name: 'repeat',
    decoupled: true,
    inputs: [
      { name: 'IN', datatype: 'INT32', dims: [-1] },
      { name: 'DELAY', datatype: 'UINT32', dims: [-1], optional: true },
      { name: 'WAIT', datatype: 'UINT32', dims: [1], optional: true },
    ],
    outputs: [
      { name: 'OUT', datatype: 'INT32', dims: [1] },
      { name: 'IDX', datatype: 'UINT32', dims: [1] },
    ],
    config: { modelTransactionPolicy: { decoupled: true } },
    async *executeStream(request, { signal }) {
      const values = request.input('IN').data as Int32Array;
      const delays = request.inputs.find((input) => input.name === 'DELAY')?.data as Uint32Array | undefined;
      const wait = request.inputs.find((input) => input.name === 'WAIT')?.data as Uint32Array | undefined;
      const errorAfter = integerParameter(request.parameters, 'error_after');
      for (let index = 0; index < values.length; index++) {
        if (errorAfter !== undefined && index >= errorAfter) {
          throw new RpcError('INTERNAL', `repeat: failing after ${errorAfter} responses as asked`);
        }
        await sleep(delays?.[index] ?? 0, signal);
        yield [
          { name: 'OUT', datatype: 'INT32', shape: [1], data: [values[index] as number] },
          { name: 'IDX', datatype: 'UINT32', shape: [1], data: [index] },
        ];
      }
      await sleep(wait?.[0] ?? 0, signal);
    },
  };
}
