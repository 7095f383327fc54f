import { decodeBytesElements, decodeTensorData, elementCount, encodeTensor } from '../../codec.js';
import { type DataType, elementSize, isDataType } from '../../datatype.js';
import { ErrorCode, InfergateError } from '../../errors.js';
import type { Parameters, ParameterValue } from '../../parameters.js';
import { type EncodedTensor, inSharedMemory } from '../../tensor.js';
import type { InferRequest, InferResponse } from '../../transport.js';
import { jsonText } from './json-text.js';

/** The header that tells how many leading bytes of the body are JSON (Triton's binary tensor extension). */
export const HEADER_LENGTH = 'Inference-Header-Content-Length';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** BYTES elements sent as JSON strings must be text; anything else needs the binary extension. */
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** A request body ready for fetch, and the headers that describe it. */
export interface EncodedBody {
  body: Uint8Array;
  headers: Record<string, string>;
}

type JsonObject = Record<string, unknown>;

function parameterJson(value: ParameterValue): unknown {
  return typeof value === 'object' && value !== null ? value.value : value;
}

export function parametersJson(parameters: Parameters | undefined): JsonObject | undefined {
  if (parameters === undefined) return undefined;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(parameters)) out[key] = parameterJson(value);
  return Object.keys(out).length > 0 ? out : undefined;
}

function jsonParameters(value: unknown, drop?: string): Parameters {
  if (typeof value !== 'object' || value === null) return {};
  const out: Record<string, ParameterValue> = {};
  for (const [key, item] of Object.entries(value as JsonObject)) {
    if (key === drop) continue;
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') out[key] = item;
  }
  return out;
}

/** A tensor's elements as JSON values (the extension-less form): FP16/BF16 have none. */
function tensorJsonData(tensor: EncodedTensor): unknown[] {
  if (tensor.datatype === 'FP16' || tensor.datatype === 'BF16') {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `input '${tensor.name}': ${tensor.datatype} has no JSON form; the server must support binary tensor data`,
    );
  }
  if (tensor.datatype === 'BYTES') {
    return decodeBytesElements(tensor.raw, undefined, `input '${tensor.name}'`).map((element, index) => {
      try {
        return strictDecoder.decode(element);
      } catch {
        throw new InfergateError(
          ErrorCode.InvalidArgument,
          `input '${tensor.name}': element ${index} is not UTF-8 text; non-text BYTES need binary tensor data`,
        );
      }
    });
  }
  const data = decodeTensorData(tensor);
  if (tensor.datatype === 'BOOL') return Array.from(data as Uint8Array, (value) => value !== 0);
  return Array.from(data as ArrayLike<number | bigint>);
}

/**
 * The body of POST /v2/models/{model}/infer. With `binary`, input tensors follow the JSON header as
 * raw bytes and every output is asked for in binary too; without it, tensors are JSON arrays.
 */
export function encodeInferBody(request: InferRequest, binary: boolean, extra?: Parameters): EncodedBody {
  const tensors: Uint8Array[] = [];
  const inputs = request.inputs.map((input) => {
    const base: JsonObject = { name: input.name, shape: input.shape, datatype: input.datatype };
    const parameters = { ...parametersJson(input.parameters) };
    if (!inSharedMemory(input)) {
      if (binary) {
        parameters.binary_data_size = input.raw.byteLength;
        tensors.push(input.raw);
      } else base.data = tensorJsonData(input);
    }
    if (Object.keys(parameters).length > 0) base.parameters = parameters;
    return base;
  });
  const requestParameters: JsonObject = { ...parametersJson(request.parameters), ...parametersJson(extra) };
  const header: JsonObject = {};
  if (request.id !== undefined && request.id !== '') header.id = request.id;
  header.inputs = inputs;
  if (request.outputs !== undefined) {
    header.outputs = request.outputs.map((output) => {
      const parameters: JsonObject = { ...parametersJson(output.parameters) };
      if (output.classCount !== undefined) parameters.classification = output.classCount;
      if (output.sharedMemory !== undefined) {
        parameters.shared_memory_region = output.sharedMemory.region;
        parameters.shared_memory_byte_size = output.sharedMemory.byteSize;
        if (output.sharedMemory.offset) parameters.shared_memory_offset = output.sharedMemory.offset;
      } else if (binary) parameters.binary_data = true;
      return Object.keys(parameters).length > 0 ? { name: output.name, parameters } : { name: output.name };
    });
  } else if (binary) requestParameters.binary_data_output = true;
  if (Object.keys(requestParameters).length > 0) header.parameters = requestParameters;
  const json = encoder.encode(jsonText(header));
  if (tensors.length === 0) return { body: json, headers: { 'content-type': 'application/json' } };
  let total = json.byteLength;
  for (const tensor of tensors) total += tensor.byteLength;
  const body = new Uint8Array(total);
  body.set(json, 0);
  let offset = json.byteLength;
  for (const tensor of tensors) {
    body.set(tensor, offset);
    offset += tensor.byteLength;
  }
  return {
    body,
    headers: { 'content-type': 'application/octet-stream', [HEADER_LENGTH]: String(json.byteLength) },
  };
}

function dataLoss(message: string): InfergateError {
  return new InfergateError(ErrorCode.DataLoss, message);
}

function shapeOf(value: unknown, name: string): number[] {
  if (!Array.isArray(value) || !value.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) {
    throw dataLoss(`output '${name}': the server sent no valid shape`);
  }
  return value as number[];
}

/** Flattens nested JSON arrays (KServe allows either form). */
function flatten(data: unknown): unknown[] {
  return Array.isArray(data) ? (data as unknown[]).flat(Number.POSITIVE_INFINITY) : [data];
}

/** JSON output data → wire bytes, as if the server had sent it in binary. */
function jsonTensorRaw(name: string, datatype: DataType, shape: number[], data: unknown): Uint8Array {
  const elements = flatten(data);
  if (datatype === 'BYTES') {
    return encodeTensor({ name, datatype, shape, data: elements.map((element) => String(element)) }).raw;
  }
  if (datatype === 'BOOL') {
    return encodeTensor({ name, datatype, shape, data: elements.map((element) => element === true) }).raw;
  }
  if (datatype === 'INT64' || datatype === 'UINT64') {
    return encodeTensor({ name, datatype, shape, data: elements.map((element) => BigInt(element as number)) })
      .raw;
  }
  return encodeTensor({ name, datatype, shape, data: elements as number[] }).raw;
}

/**
 * Parses an infer response: the JSON header (all of the body, or its first `headerLength` bytes), then
 * each binary output's bytes in order, as views into `body` (no copy).
 */
export function decodeInferResponse(body: Uint8Array, headerLength: number | undefined): InferResponse {
  const jsonEnd = headerLength ?? body.byteLength;
  if (jsonEnd > body.byteLength)
    throw dataLoss(`the JSON header claims ${jsonEnd} bytes of a ${body.byteLength}-byte body`);
  let header: JsonObject;
  try {
    header = JSON.parse(decoder.decode(body.subarray(0, jsonEnd))) as JsonObject;
  } catch (error) {
    throw new InfergateError(ErrorCode.DataLoss, 'the server sent an infer response that is not JSON', {
      cause: error,
    });
  }
  let offset = jsonEnd;
  const outputs = Array.isArray(header.outputs) ? (header.outputs as JsonObject[]) : [];
  const tensors = outputs.map((output): EncodedTensor => {
    const name = String(output.name);
    const datatype = output.datatype;
    if (!isDataType(datatype)) throw dataLoss(`output '${name}': unknown datatype ${String(datatype)}`);
    const shape = shapeOf(output.shape, name);
    const parameters = jsonParameters(output.parameters, 'binary_data_size');
    const size = (output.parameters as JsonObject | undefined)?.binary_data_size;
    let raw: Uint8Array;
    if (typeof size === 'number') {
      if (!Number.isSafeInteger(size) || size < 0 || offset + size > body.byteLength) {
        throw dataLoss(
          `output '${name}': ${size} binary bytes claimed, ${body.byteLength - offset} left in the body`,
        );
      }
      raw = body.subarray(offset, offset + size);
      offset += size;
      // A fixed-size datatype's bytes must fill its shape exactly, as over gRPC.
      const element = elementSize(datatype);
      if (element > 0 && size !== elementCount(shape) * element)
        throw dataLoss(
          `output '${name}': ${size} binary bytes for shape [${shape.join(', ')}] of ${datatype}`,
        );
    } else if (output.data !== undefined) raw = jsonTensorRaw(name, datatype, shape, output.data);
    else raw = new Uint8Array(0); // written to a shared-memory region
    return { name, datatype, shape, raw, parameters };
  });
  return {
    model: String(header.model_name ?? ''),
    modelVersion: String(header.model_version ?? ''),
    id: typeof header.id === 'string' ? header.id : '',
    outputs: tensors,
    parameters: jsonParameters(header.parameters),
  };
}
