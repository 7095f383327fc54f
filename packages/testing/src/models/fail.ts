import { status } from '../internal/grpc-status.js';
import { integerParameter } from '../internal/parameters.js';
import { sleep } from '../internal/sleep.js';
import type { ModelDefinition } from '../model-definition.js';
import { RpcError } from '../rpc-error.js';

/**
 * `fail`: answers with the status the request asks for. Request parameters: `fail_code` (gRPC status
 * number; default 13 INTERNAL; 0 succeeds), `fail_message` (string), `delay_ms` (wait first; a
 * cancellation ends the wait). INPUT0 is optional and takes any datatype and shape; on success
 * OUTPUT0 echoes it (or is an empty FP32 tensor).
 */
export function failModel(): ModelDefinition {
  return {
    name: 'fail',
    inputs: [
      { name: 'INPUT0', datatype: 'FP32', dims: [-1], optional: true, anyDatatype: true, anyShape: true },
    ],
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
    async execute(request, { signal }) {
      const { parameters } = request;
      await sleep(integerParameter(parameters, 'delay_ms') ?? 0, signal);
      const code = integerParameter(parameters, 'fail_code') ?? status.INTERNAL;
      if (code !== status.OK) {
        const message = parameters.fail_message;
        throw new RpcError(
          code,
          typeof message === 'string' ? message : `model 'fail' failed as asked (code ${code})`,
        );
      }
      const input = request.inputs[0];
      if (input === undefined)
        return [{ name: 'OUTPUT0', datatype: 'FP32', shape: [0], data: new Float32Array(0) }];
      return [{ name: 'OUTPUT0', datatype: input.datatype, shape: input.shape, raw: input.raw }];
    },
  };
}
