import { encodeTensor } from './codec.js';
import { ErrorCode, InfergateError } from './errors.js';
import { checkOutputsInto } from './internal/infer-response-into.js';
import { type Parameters, param } from './parameters.js';
import type { EncodedTensor, InputTensor } from './tensor.js';
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

/** Above this many inputs a `Set` finds a repeated name; below it, a scan of the earlier names. */
const SCAN_NAMES_UP_TO = 16;

/**
 * INVALID_ARGUMENT naming the first input whose name an earlier one already has. A request has a
 * handful of inputs, so comparing each with those before it allocates nothing, where a `Set` per
 * call was about 150 bytes of garbage on every call.
 */
function checkUniqueNames(encoded: readonly EncodedTensor[]): void {
  if (encoded.length > SCAN_NAMES_UP_TO) {
    const names = new Set<string>();
    for (const input of encoded) {
      if (names.has(input.name)) throw givenTwice(input.name);
      names.add(input.name);
    }
    return;
  }
  for (let index = 1; index < encoded.length; index++) {
    const name = (encoded[index] as EncodedTensor).name;
    for (let earlier = 0; earlier < index; earlier++) {
      if ((encoded[earlier] as EncodedTensor).name === name) throw givenTwice(name);
    }
  }
}

function givenTwice(name: string): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, `input '${name}' is given twice`);
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
  const encoded: EncodedTensor[] = new Array(inputs.length);
  for (let index = 0; index < inputs.length; index++)
    encoded[index] = encodeTensor(inputs[index] as InputTensor);
  checkUniqueNames(encoded);
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
  // Built field by field: spreading conditional literals allocates an object per option per call.
  const request: InferRequest = { model, inputs: encoded };
  if (options.modelVersion !== undefined) request.modelVersion = options.modelVersion;
  if (options.requestId !== undefined) request.id = options.requestId;
  if (options.outputs !== undefined) {
    const outputs = options.outputs.map((output) => (typeof output === 'string' ? { name: output } : output));
    checkOutputsInto(outputs);
    request.outputs = outputs;
  }
  if (parameters !== undefined) request.parameters = parameters;
  return request;
}
