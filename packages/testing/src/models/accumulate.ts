import { ConfigDataType } from '../internal/proto.js';
import type { ModelDefinition } from '../model-definition.js';

/**
 * `accumulate`: a stateful model behind the sequence batcher (implicit state). `INPUT` INT32 [1]
 * with max_batch_size 8, so requests send shape [1,1]; `OUTPUT` INT32 [1] is the running sum of the
 * sequence's inputs so far. Requests carry `sequence_id` (uint64 or string), `sequence_start`,
 * `sequence_end`; the state starts at 0 on START and is freed at END.
 */
export function accumulateModel(): ModelDefinition {
  return {
    name: 'accumulate',
    maxBatchSize: 8,
    sequenceBatching: true,
    inputs: [{ name: 'INPUT', datatype: 'INT32', dims: [1] }],
    outputs: [{ name: 'OUTPUT', datatype: 'INT32', dims: [1] }],
    config: {
      schedulingChoice: {
        case: 'sequenceBatching',
        value: {
          maxSequenceIdleMicroseconds: 1_000_000n,
          state: [
            {
              inputName: 'ACC_STATE_IN',
              outputName: 'ACC_STATE_OUT',
              dataType: ConfigDataType.TYPE_INT32,
              dims: [1n],
              initialState: [
                {
                  dataType: ConfigDataType.TYPE_INT32,
                  dims: [1n],
                  name: 'zero',
                  stateData: { case: 'zeroData', value: true },
                },
              ],
            },
          ],
        },
      },
    },
    execute(request, { sequence }) {
      const input = request.input('INPUT');
      const values = input.data as Int32Array;
      const state = sequence?.state as { sum?: number };
      const sums = new Int32Array(values.length);
      for (let i = 0; i < values.length; i++) {
        state.sum = (state.sum ?? 0) + (values[i] as number);
        sums[i] = state.sum;
      }
      return [{ name: 'OUTPUT', datatype: 'INT32', shape: input.shape, data: sums }];
    },
  };
}
