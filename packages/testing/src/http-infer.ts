import { create } from '@bufbuild/protobuf';
import {
  type DataType,
  decodeBytesElements,
  decodeTensorData,
  encodeTensor,
  InfergateError,
  isDataType,
  type Parameters,
  type ParameterValue,
} from '@infergate/core';
import { status } from './internal/grpc-status.js';
import { jsonText } from './internal/http-json.js';
import { fromWireParameters, toWireParameters } from './internal/parameters.js';
import {
  type ModelInferRequest,
  ModelInferRequestSchema,
  type ModelInferResponse,
} from './internal/proto.js';
import type { TensorSpec } from './model-definition.js';
import { invalidArgument, RpcError } from './rpc-error.js';

// KServe v2 REST inference bodies ↔ the ModelInferRequest/Response messages the shared pipeline
// runs on, with Triton's binary tensor data extension: a JSON header whose length is in
// `Inference-Header-Content-Length`, then each binary tensor's bytes in order.

type Json = Record<string, unknown>;
const decoder = new TextDecoder();

function jsonParameters(value: unknown, drop: readonly string[] = []): Parameters {
  const out: Record<string, ParameterValue> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, item] of Object.entries(value as Json)) {
    if (drop.includes(key)) continue;
    if (typeof item === 'string' || typeof item === 'boolean' || typeof item === 'number') out[key] = item;
    else throw invalidArgument(`parameter '${key}' must be a bool, number or string`);
  }
  return out;
}

function flatten(data: unknown): unknown[] {
  return Array.isArray(data) ? (data as unknown[]).flat(Number.POSITIVE_INFINITY) : [data];
}

/** JSON tensor data → wire bytes (what `raw_input_contents` would have carried). */
export function jsonDataRaw(
  name: string,
  datatype: DataType,
  shape: readonly number[],
  data: unknown,
): Uint8Array {
  const elements = flatten(data);
  try {
    if (datatype === 'BYTES') {
      return encodeTensor({
        name,
        datatype,
        shape,
        data: elements.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))),
      }).raw;
    }
    if (datatype === 'BOOL')
      return encodeTensor({ name, datatype, shape, data: elements.map((item) => item === true) }).raw;
    if (datatype === 'INT64' || datatype === 'UINT64') {
      return encodeTensor({ name, datatype, shape, data: elements.map((item) => BigInt(item as number)) })
        .raw;
    }
    return encodeTensor({ name, datatype, shape, data: elements as number[] }).raw;
  } catch (error) {
    throw invalidArgument(
      `input '${name}': ${error instanceof InfergateError ? error.rawMessage : String(error)}`,
    );
  }
}

function parseHeader(body: Uint8Array, headerLength: number | undefined): Json {
  const end = headerLength ?? body.byteLength;
  if (!Number.isSafeInteger(end) || end < 0 || end > body.byteLength) {
    throw invalidArgument(
      `Inference-Header-Content-Length ${headerLength} is past the end of a ${body.byteLength}-byte body`,
    );
  }
  try {
    const parsed = JSON.parse(decoder.decode(body.subarray(0, end))) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Json;
  } catch (error) {
    throw invalidArgument(
      `failed to parse the request JSON buffer: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export interface HttpInferRequest {
  message: ModelInferRequest;
  /** Outputs to return as binary (all of them when `binary_data_output` is set). */
  binaryOutputs: ReadonlySet<string> | 'all';
}

/** Reads POST /v2/models/{model}[/versions/{version}]/infer into the pipeline's message. */
export function readHttpInfer(
  model: string,
  version: string,
  body: Uint8Array,
  headerLength: number | undefined,
): HttpInferRequest {
  const header = parseHeader(body, headerLength);
  let offset = headerLength ?? body.byteLength;
  const rawInputContents: Uint8Array[] = [];
  const inputs = (Array.isArray(header.inputs) ? (header.inputs as Json[]) : []).map((input) => {
    const name = String(input.name);
    const datatype = String(input.datatype);
    const shape = Array.isArray(input.shape) ? input.shape.map(Number) : [];
    const parameters = jsonParameters(input.parameters, ['binary_data_size']);
    const size = (input.parameters as Json | undefined)?.binary_data_size;
    if (typeof size === 'number') {
      if (offset + size > body.byteLength)
        throw invalidArgument(`input '${name}': binary_data_size ${size} overruns the body`);
      rawInputContents.push(body.subarray(offset, offset + size));
      offset += size;
    } else if (input.data !== undefined) {
      if (!isDataType(datatype)) throw invalidArgument(`invalid datatype '${datatype}' for input '${name}'`);
      rawInputContents.push(jsonDataRaw(name, datatype, shape, input.data));
    } else if (typeof parameters.shared_memory_region !== 'string') {
      throw invalidArgument(`input '${name}' has neither data, binary_data_size nor a shared memory region`);
    }
    return {
      name,
      datatype,
      shape: shape.map((dim) => BigInt(dim)),
      parameters: toWireParameters(parameters),
    };
  });
  const requestParameters = jsonParameters(header.parameters, ['binary_data_output']);
  const allBinary = (header.parameters as Json | undefined)?.binary_data_output === true;
  const binary = new Set<string>();
  const outputs = (Array.isArray(header.outputs) ? (header.outputs as Json[]) : []).map((output) => {
    const name = String(output.name);
    if ((output.parameters as Json | undefined)?.binary_data === true) binary.add(name);
    return { name, parameters: toWireParameters(jsonParameters(output.parameters, ['binary_data'])) };
  });
  const message = create(ModelInferRequestSchema, {
    modelName: model,
    modelVersion: version,
    id: typeof header.id === 'string' ? header.id : '',
    inputs,
    outputs,
    parameters: toWireParameters(requestParameters),
    rawInputContents,
  });
  return { message, binaryOutputs: allBinary ? 'all' : binary };
}

/** A tensor's JSON data (FP16/BF16 have none, as in Triton). */
function jsonData(name: string, datatype: DataType, shape: number[], raw: Uint8Array): unknown[] {
  if (datatype === 'BYTES') return decodeBytesElements(raw).map((element) => decoder.decode(element));
  if (datatype === 'FP16' || datatype === 'BF16') {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `output '${name}': ${datatype} has no JSON form; ask for binary data`,
    );
  }
  const data = decodeTensorData({ name, datatype, shape, raw });
  if (datatype === 'BOOL') return Array.from(data as Uint8Array, (value) => value !== 0);
  return Array.from(data as ArrayLike<number | bigint>);
}

/** The pipeline's response → the HTTP body and its JSON header length. */
export function writeHttpInfer(
  response: ModelInferResponse,
  binaryOutputs: ReadonlySet<string> | 'all',
): { body: Uint8Array; headerLength: number | undefined } {
  const binaries: Uint8Array[] = [];
  const outputs = response.outputs.map((output, index) => {
    const parameters: Json = { ...fromWireParameters(output.parameters) };
    const shape = output.shape.map((dim) => Number(dim));
    const out: Json = { name: output.name, datatype: output.datatype, shape };
    if (typeof parameters.shared_memory_region !== 'string') {
      const raw = response.rawOutputContents[index] ?? new Uint8Array(0);
      if (binaryOutputs === 'all' || binaryOutputs.has(output.name)) {
        parameters.binary_data_size = raw.byteLength;
        binaries.push(raw);
      } else if (isDataType(output.datatype)) out.data = jsonData(output.name, output.datatype, shape, raw);
    }
    if (Object.keys(parameters).length > 0) out.parameters = parameters;
    return out;
  });
  const header: Json = { model_name: response.modelName, model_version: response.modelVersion };
  if (response.id !== '') header.id = response.id;
  const parameters = fromWireParameters(response.parameters);
  if (Object.keys(parameters).length > 0) header.parameters = parameters;
  header.outputs = outputs;
  const json = new TextEncoder().encode(jsonText(header));
  if (binaries.length === 0) return { body: json, headerLength: undefined };
  const total = binaries.reduce((sum, part) => sum + part.byteLength, json.byteLength);
  const body = new Uint8Array(total);
  body.set(json);
  let offset = json.byteLength;
  for (const part of binaries) {
    body.set(part, offset);
    offset += part.byteLength;
  }
  return { body, headerLength: json.byteLength };
}

/**
 * A generate request (JSON object) → the pipeline's message: keys naming model inputs become those
 * inputs (a scalar or a flat list; a batch dimension of 1 for batching models), `parameters` and the
 * remaining keys become request parameters, as Triton's generate extension does.
 */
export function readGenerate(
  model: string,
  version: string,
  specs: readonly TensorSpec[],
  outputSpecs: readonly TensorSpec[],
  batching: boolean,
  body: Uint8Array,
): ModelInferRequest {
  const json = parseHeader(body, undefined);
  const inputs: { name: string; datatype: string; shape: bigint[] }[] = [];
  const rawInputContents: Uint8Array[] = [];
  const parameters: Record<string, ParameterValue> = { ...jsonParameters(json.parameters) };
  for (const [key, value] of Object.entries(json)) {
    if (key === 'parameters') continue;
    const spec = specs.find((candidate) => candidate.name === key);
    if (spec === undefined) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        parameters[key] = value;
      continue;
    }
    const elements = flatten(value);
    const shape = batching ? [1, elements.length] : [elements.length];
    inputs.push({ name: key, datatype: spec.datatype, shape: shape.map((dim) => BigInt(dim)) });
    rawInputContents.push(jsonDataRaw(key, spec.datatype, shape, elements));
  }
  return create(ModelInferRequestSchema, {
    modelName: model,
    modelVersion: version,
    inputs,
    outputs: generateOutputs(outputSpecs, json).map((name) => ({ name })),
    parameters: toWireParameters(parameters),
    rawInputContents,
  });
}

/**
 * The outputs a generate call returns. The reference server insists that a model produce every
 * output asked for, so with the text_input/text_output convention (vLLM, TensorRT-LLM) it asks for
 * `text_output` and for each `return_<output>: true` flag; other models return all their outputs.
 */
function generateOutputs(specs: readonly TensorSpec[], json: Json): string[] {
  const names = specs.map((spec) => spec.name);
  if (!names.includes('text_output')) return [];
  return names.filter((name) => name === 'text_output' || json[`return_${name}`] === true);
}

/** One pipeline response → a generate response: each output by name, a single element as a scalar. */
export function writeGenerate(response: ModelInferResponse): Json {
  const out: Json = { model_name: response.modelName, model_version: response.modelVersion };
  for (const [index, output] of response.outputs.entries()) {
    if (!isDataType(output.datatype)) continue;
    const shape = output.shape.map((dim) => Number(dim));
    const data = jsonData(
      output.name,
      output.datatype,
      shape,
      response.rawOutputContents[index] ?? new Uint8Array(0),
    );
    out[output.name] = data.length === 1 ? data[0] : data;
  }
  return out;
}
