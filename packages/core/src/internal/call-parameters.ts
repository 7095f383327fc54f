import { ErrorCode, InfergateError } from '../errors.js';
import type { Parameters } from '../parameters.js';
import type { CallOptions, InferRequest } from '../transport.js';

/**
 * Request parameters that CallOptions stand for, added by every transport that puts a request on
 * the wire: `priority` (Triton reads it as uint64). A priority the request already names wins.
 */
export function callParameters(request: InferRequest, options: CallOptions): Parameters | undefined {
  if (options.priority === undefined || options.priority === 0) return undefined;
  if (request.parameters?.priority !== undefined) return undefined;
  if (!Number.isSafeInteger(options.priority) || options.priority < 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `priority must be a non-negative integer, got ${options.priority}`,
    );
  }
  return { priority: { kind: 'uint64', value: BigInt(options.priority) } };
}
