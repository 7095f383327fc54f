import { encodeTensor } from './codec.js';
import { ErrorCode, InfergateError } from './errors.js';
import { type Parameters, param } from './parameters.js';
import type { InputTensor } from './tensor.js';
import type { CallOptions, InferRequest, RequestedOutput } from './transport.js';

export interface InferOptions extends CallOptions {
  modelVersion?: string;
  /** Request id, echoed back by the server. */
  requestId?: string;
  /** Outputs to return (names or specs); default: all. */
  outputs?: readonly (string | RequestedOutput)[];
  /** Custom request parameters. */
  parameters?: Parameters;
  /** Triton's server-side timeout for the request in its queue, in microseconds. */
  timeoutUs?: number;
  /** Correlation id of a stateful model's sequence (number, bigint or string). */
  sequenceId?: number | bigint | string;
  /** Marks the first request of the sequence. */
  sequenceStart?: boolean;
  /** Marks the last request of the sequence; the server frees its state. */
  sequenceEnd?: boolean;
}

/** Triton's sequence parameters, as tritonclient sends them (int64 or string id, bool flags). */
function sequenceParameters(options: InferOptions): Parameters {
  const id = options.sequenceId;
  let wireId: Parameters[string];
  if (typeof id === 'string') {
    if (id === '') throw new InfergateError(ErrorCode.InvalidArgument, 'sequenceId must not be empty');
    wireId = id;
  } else if (
    (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) ||
    (typeof id === 'bigint' && id > 0n)
  ) {
    if (BigInt(id) >= 2n ** 63n) wireId = param.uint64(id);
    else wireId = param.int64(id);
  } else {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `sequenceId must be a positive integer or a string, got ${String(id)}`,
    );
  }
  return {
    sequence_id: wireId,
    sequence_start: options.sequenceStart === true,
    sequence_end: options.sequenceEnd === true,
  };
}

/** Builds the wire request from user-facing inputs; every validation happens here. */
export function buildInferRequest(
  model: string,
  inputs: readonly InputTensor[],
  options: InferOptions = {},
): InferRequest {
  if (typeof model !== 'string' || model === '') {
    throw new InfergateError(ErrorCode.InvalidArgument, 'model must be a non-empty string');
  }
  if (!Array.isArray(inputs))
    throw new InfergateError(ErrorCode.InvalidArgument, 'inputs must be an array of tensors');
  const encoded = inputs.map(encodeTensor);
  const names = new Set<string>();
  for (const input of encoded) {
    if (names.has(input.name))
      throw new InfergateError(ErrorCode.InvalidArgument, `input '${input.name}' is given twice`);
    names.add(input.name);
  }
  let parameters = options.parameters;
  if (options.timeoutUs !== undefined) {
    if (!Number.isSafeInteger(options.timeoutUs) || options.timeoutUs < 0) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `timeoutUs must be a non-negative integer, got ${options.timeoutUs}`,
      );
    }
    parameters = { ...parameters, timeout: { kind: 'int64', value: BigInt(options.timeoutUs) } };
  }
  if (options.sequenceId !== undefined) parameters = { ...parameters, ...sequenceParameters(options) };
  else if (options.sequenceStart || options.sequenceEnd) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'sequenceStart/sequenceEnd need a sequenceId');
  }
  return {
    model,
    inputs: encoded,
    ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
    ...(options.requestId !== undefined ? { id: options.requestId } : {}),
    ...(options.outputs !== undefined
      ? { outputs: options.outputs.map((output) => (typeof output === 'string' ? { name: output } : output)) }
      : {}),
    ...(parameters !== undefined ? { parameters } : {}),
  };
}
