import { ErrorCode, InfergateError } from '../errors.js';
import type { InferRequest, InferResponse } from '../transport.js';

// Shared by the gRPC and the HTTP transports: a module of its own, so the HTTP entry (edge
// runtimes) does not pull in the gRPC response conversion.

/** Every output the request named must be in the response. */
export function checkRequestedOutputs(request: InferRequest, response: InferResponse): void {
  for (const requested of request.outputs ?? []) {
    if (!response.outputs.some((output) => output.name === requested.name)) {
      throw new InfergateError(
        ErrorCode.DataLoss,
        `the server left out requested output '${requested.name}' (it sent ${response.outputs.map((output) => `'${output.name}'`).join(', ') || 'none'})`,
        { model: request.model },
      );
    }
  }
}
