// The InferResponse of a ModelInferResponse, without the protobuf runtime: the http2 engine's
// inference path reads answers with infer-response-reader.ts and converts them here, so that a
// process that only infers never loads @bufbuild/protobuf or builds the descriptors of src/gen
// (decision 0024). Type imports of src/gen only.
import { elementCount } from '../codec.js';
import { type DataType, elementSize, isDataType } from '../datatype.js';
import { ErrorCode, InfergateError } from '../errors.js';
import type { InferParameter, InferTensorContents, ModelInferResponse } from '../gen/grpc_service_pb.js';
import { fromWireParameter, type Parameters, type ParameterValue } from '../parameters.js';
import { type EncodedTensor, sharedMemoryParameters } from '../tensor.js';
import type { InferRequest, InferResponse } from '../transport.js';

/**
 * Sets an own, enumerable property even for the key `__proto__`, where a plain assignment would
 * replace the object's prototype instead and lose the entry: a parameter map holds whatever names
 * the caller (or the server) used, and every transport must carry the same ones.
 */
export function setEntry<T>(out: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
}

export function fromParameterMap(map: Record<string, InferParameter>): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [name, parameter] of Object.entries(map)) {
    const value = fromWireParameter(parameter.parameterChoice);
    if (value !== undefined) setEntry(out, name, value);
  }
  return out;
}

function shapeToNumbers(shape: readonly bigint[], what: string): number[] {
  return shape.map((dim) => {
    const value = Number(dim);
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new InfergateError(ErrorCode.DataLoss, `${what}: invalid dimension ${dim}`);
    }
    return value;
  });
}

/** Servers may answer in typed `contents` instead of raw bytes (KServe allows both): convert. */
function contentsToRaw(datatype: DataType, contents: InferTensorContents | undefined): Uint8Array {
  if (contents === undefined) return new Uint8Array(0);
  const view = (array: ArrayBufferView) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  switch (datatype) {
    case 'BOOL':
      return Uint8Array.from(contents.boolContents, (value) => (value ? 1 : 0));
    case 'UINT8':
      return Uint8Array.from(contents.uintContents);
    case 'UINT16':
      return view(Uint16Array.from(contents.uintContents));
    case 'UINT32':
      return view(Uint32Array.from(contents.uintContents));
    case 'UINT64':
      return view(BigUint64Array.from(contents.uint64Contents));
    case 'INT8':
      return view(Int8Array.from(contents.intContents));
    case 'INT16':
      return view(Int16Array.from(contents.intContents));
    case 'INT32':
      return view(Int32Array.from(contents.intContents));
    case 'INT64':
      return view(BigInt64Array.from(contents.int64Contents));
    case 'FP32':
      return view(Float32Array.from(contents.fp32Contents));
    case 'FP64':
      return view(Float64Array.from(contents.fp64Contents));
    case 'BYTES': {
      const total = contents.bytesContents.reduce((sum, element) => sum + 4 + element.byteLength, 0);
      const out = Buffer.allocUnsafe(total);
      let offset = 0;
      for (const element of contents.bytesContents) {
        out.writeUInt32LE(element.byteLength, offset);
        out.set(element, offset + 4);
        offset += 4 + element.byteLength;
      }
      return out;
    }
    default:
      return new Uint8Array(0);
  }
}

/**
 * Outputs the request bound to shared memory, by name. Their bytes are in the region, not the
 * message: Triton still sends an (empty) raw_output_contents entry for each, index-aligned.
 */
export function sharedMemoryOutputs(request: InferRequest | undefined): ReadonlyMap<string, Parameters> {
  const bound = new Map<string, Parameters>();
  for (const output of request?.outputs ?? []) {
    if (output.sharedMemory !== undefined)
      bound.set(output.name, sharedMemoryParameters(output.sharedMemory));
  }
  return bound;
}

function checkBytesElements(raw: Uint8Array, shape: readonly number[], what: string, model: string): void {
  const expected = elementCount(shape, what);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let offset = 0;
  let count = 0;
  while (offset < raw.byteLength) {
    if (offset + 4 > raw.byteLength || count >= expected) break;
    offset += 4 + view.getUint32(offset, true);
    count++;
  }
  if (offset !== raw.byteLength || count !== expected) {
    throw new InfergateError(
      ErrorCode.DataLoss,
      `${what}: BYTES data does not hold the ${expected} elements of shape [${shape.join(', ')}] (a length prefix runs past the ${raw.byteLength} bytes, or the count differs)`,
      { model },
    );
  }
}

export { checkRequestedOutputs } from './requested-outputs.js';

export function fromModelInferResponse(
  message: ModelInferResponse,
  bound: ReadonlyMap<string, Parameters> = new Map(),
): InferResponse {
  const raws = message.rawOutputContents;
  const isBound = (output: { name: string; parameters: Record<string, unknown> }) =>
    bound.has(output.name) || output.parameters.shared_memory_region !== undefined;
  // Triton sends one raw entry per output (empty for shared-memory ones); accept servers that leave
  // the shared-memory ones out, too.
  const aligned = raws.length === message.outputs.length;
  if (
    raws.length > 0 &&
    !aligned &&
    raws.length !== message.outputs.filter((output) => !isBound(output)).length
  ) {
    throw new InfergateError(
      ErrorCode.DataLoss,
      `the server sent ${raws.length} raw output buffers for ${message.outputs.length} outputs`,
      { model: message.modelName },
    );
  }
  let rawIndex = 0;
  const outputs: EncodedTensor[] = message.outputs.map((output, index) => {
    const what = `output '${output.name}'`;
    if (!isDataType(output.datatype)) {
      throw new InfergateError(
        ErrorCode.DataLoss,
        `${what}: the server sent unknown datatype '${output.datatype}'`,
      );
    }
    const inSharedMemory = isBound(output);
    let raw: Uint8Array;
    if (aligned) raw = raws[index] as Uint8Array;
    else if (inSharedMemory) raw = new Uint8Array(0);
    else if (raws.length > 0) raw = raws[rawIndex++] ?? new Uint8Array(0);
    else raw = contentsToRaw(output.datatype, output.contents);
    if (inSharedMemory) raw = new Uint8Array(0);
    const shape = shapeToNumbers(output.shape, what);
    const size = elementSize(output.datatype);
    // Outputs bound to shared memory carry no bytes here; everything else must match its shape.
    if (size > 0 && !inSharedMemory && raw.byteLength !== elementCount(shape, what) * size) {
      throw new InfergateError(
        ErrorCode.DataLoss,
        `${what}: ${raw.byteLength} bytes for shape [${shape.join(', ')}] of ${output.datatype}`,
        { model: message.modelName },
      );
    }
    // BYTES: walk the length prefixes now (no copy), so a prefix past the buffer or an element
    // count that disagrees with the shape fails here, typed, not when a caller reads the data.
    if (output.datatype === 'BYTES' && !inSharedMemory)
      checkBytesElements(raw, shape, what, message.modelName);
    const boundParameters = bound.get(output.name);
    // The usual output carries no parameters: skip building and spreading empty maps.
    if (boundParameters === undefined && !hasKeys(output.parameters)) {
      return { name: output.name, datatype: output.datatype, shape, raw };
    }
    const parameters = { ...fromParameterMap(output.parameters), ...boundParameters };
    return {
      name: output.name,
      datatype: output.datatype,
      shape,
      raw,
      ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    };
  });
  return {
    model: message.modelName,
    modelVersion: message.modelVersion,
    id: message.id,
    outputs,
    parameters: hasKeys(message.parameters) ? fromParameterMap(message.parameters) : {},
  };
}

function hasKeys(map: object): boolean {
  for (const key in map) if (Object.hasOwn(map, key)) return true;
  return false;
}
