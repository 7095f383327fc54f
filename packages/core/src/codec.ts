import { type DataType, elementSize, isDataType } from './datatype.js';
import { ErrorCode, InfergateError } from './errors.js';
import { allocBytes, bytesView, utf8Bytes } from './internal/bytes.js';
import { float32BitsToHalfBits, floatToBf16Bits, floatToHalfBits, halfBitsToFloat } from './internal/half.js';
import { intoArray } from './internal/infer-response-into.js';
import {
  type DataInputTensor,
  type EncodedTensor,
  type InputTensor,
  type SharedMemoryInputTensor,
  sharedMemoryParameters,
  type TensorOutputData,
  type TypedArray,
} from './tensor.js';

function invalid(message: string): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, message);
}

/** Product of a shape's dimensions; validates that each is a non-negative integer. */
export function elementCount(shape: readonly number[], what = 'tensor'): number {
  let count = 1;
  for (const dim of shape) {
    if (!Number.isSafeInteger(dim) || dim < 0) {
      throw invalid(`${what}: shape [${shape.join(', ')}] must hold non-negative integers`);
    }
    count *= dim;
  }
  return count;
}

type IntRange = readonly [min: number, max: number];
const intRanges: Partial<Record<DataType, IntRange>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
};

type TypedArrayConstructor = { new (length: number): TypedArray; readonly name: string };
const naturalArray: Partial<Record<DataType, TypedArrayConstructor>> = {
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP32: Float32Array,
  FP64: Float64Array,
};

function asBytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function isTypedArray(value: unknown): value is TypedArray {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

/** Encodes a BYTES tensor's elements: each one a 4-byte little-endian length, then its bytes. */
export function encodeBytesElements(
  elements: readonly (string | Uint8Array)[],
  what = 'BYTES tensor',
): Uint8Array {
  const parts: Uint8Array[] = new Array(elements.length);
  let total = 0;
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i];
    let bytes: Uint8Array;
    if (typeof element === 'string') bytes = utf8Bytes(element);
    else if (element instanceof Uint8Array) bytes = element;
    else
      throw invalid(
        `${what}: element ${i} is ${describe(element)}; BYTES elements must be strings or Uint8Arrays`,
      );
    if (bytes.byteLength > 0xffffffff) throw invalid(`${what}: element ${i} is longer than 4 GiB`);
    parts[i] = bytes;
    total += 4 + bytes.byteLength;
  }
  const out = allocBytes(total);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let offset = 0;
  for (const bytes of parts) {
    view.setUint32(offset, bytes.byteLength, true);
    out.set(bytes, offset + 4);
    offset += 4 + bytes.byteLength;
  }
  return out;
}

/**
 * Splits BYTES wire data into its elements, as views (no copy) into `raw`: Buffers under Node,
 * plain Uint8Arrays in runtimes without Buffer.
 */
export function decodeBytesElements(raw: Uint8Array, expected?: number, what = 'BYTES tensor'): Buffer[] {
  const buffer = bytesView(raw) as Buffer;
  const lengths = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const elements: Buffer[] = [];
  let offset = 0;
  while (offset < buffer.byteLength) {
    if (offset + 4 > buffer.byteLength)
      throw new InfergateError(ErrorCode.DataLoss, `${what}: truncated length prefix`);
    const length = lengths.getUint32(offset, true);
    offset += 4;
    if (offset + length > buffer.byteLength) {
      throw new InfergateError(ErrorCode.DataLoss, `${what}: element ${elements.length} overruns the data`);
    }
    elements.push(buffer.subarray(offset, offset + length));
    offset += length;
  }
  if (expected !== undefined && elements.length !== expected) {
    throw new InfergateError(
      ErrorCode.DataLoss,
      `${what}: holds ${elements.length} elements, shape says ${expected}`,
    );
  }
  return elements;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (isTypedArray(value)) return `a ${value.constructor.name}`;
  return `a ${typeof value}`;
}

function encodeFixed(input: DataInputTensor, count: number, what: string): Uint8Array {
  const { datatype, data } = input;
  const size = elementSize(datatype);
  // Raw bytes for any fixed-size datatype.
  if (data instanceof Uint8Array && datatype !== 'BOOL') {
    if (data.byteLength !== count * size) {
      throw invalid(
        `${what}: ${data.byteLength} raw bytes given, but ${count} ${datatype} elements need ${count * size}`,
      );
    }
    return data;
  }
  if (isTypedArray(data)) {
    if (data.length !== count && !(datatype === 'BOOL' && data instanceof Uint8Array)) {
      throw invalid(`${what}: ${data.length} elements given, shape needs ${count}`);
    }
    const natural = naturalArray[datatype];
    if (natural !== undefined && data.constructor === natural) return asBytes(data);
    // numpy maps Uint8ClampedArray to uint8, and canvas ImageData is one: the bytes are the same.
    if (datatype === 'UINT8' && data instanceof Uint8ClampedArray) return asBytes(data);
    if ((datatype === 'FP16' || datatype === 'BF16') && data instanceof Uint16Array) return asBytes(data);
    if (
      (datatype === 'FP16' || datatype === 'BF16') &&
      (data instanceof Float32Array || data instanceof Float64Array)
    ) {
      return encodeHalf(datatype, data, what);
    }
    if (datatype === 'BOOL' && data instanceof Uint8Array) {
      if (data.byteLength !== count)
        throw invalid(`${what}: ${data.byteLength} elements given, shape needs ${count}`);
      for (let i = 0; i < data.length; i++) {
        if ((data[i] as number) > 1) throw invalid(`${what}: BOOL element ${i} is ${data[i]}; use 0 or 1`);
      }
      return data;
    }
    const expected =
      (datatype === 'UINT8' ? 'Uint8Array or Uint8ClampedArray' : natural?.name) ??
      (datatype === 'BOOL' ? 'boolean[] or Uint8Array' : 'Float32Array or Uint16Array');
    throw invalid(`${what}: datatype ${datatype} needs ${expected}, got ${describe(data)}`);
  }
  if (!Array.isArray(data))
    throw invalid(`${what}: data must be an array or typed array, got ${describe(data)}`);
  if (data.length !== count) throw invalid(`${what}: ${data.length} elements given, shape needs ${count}`);
  return encodePlainArray(datatype, data as readonly unknown[], what);
}

function encodeHalf(datatype: 'FP16' | 'BF16', values: ArrayLike<number>, what: string): Uint8Array {
  const out = new Uint16Array(values.length);
  if (datatype === 'FP16' && values instanceof Float32Array) {
    // Already float32: round from the bits, without the double's sticky-bit work.
    const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < bits.length; i++) out[i] = float32BitsToHalfBits(bits[i] as number);
    return asBytes(out);
  }
  const convert = datatype === 'FP16' ? floatToHalfBits : floatToBf16Bits;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== 'number')
      throw invalid(`${what}: element ${i} is ${describe(value)}; ${datatype} needs numbers`);
    out[i] = convert(value);
  }
  return asBytes(out);
}

function encodePlainArray(datatype: DataType, values: readonly unknown[], what: string): Uint8Array {
  switch (datatype) {
    case 'BOOL': {
      const out = new Uint8Array(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (value === true || value === 1) out[i] = 1;
        else if (value === false || value === 0) out[i] = 0;
        else throw invalid(`${what}: BOOL element ${i} is ${String(value)}; use true/false or 1/0`);
      }
      return out;
    }
    case 'FP16':
    case 'BF16':
      return encodeHalf(datatype, values as ArrayLike<number>, what);
    case 'FP32':
    case 'FP64': {
      const out = datatype === 'FP32' ? new Float32Array(values.length) : new Float64Array(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (typeof value !== 'number') {
          throw invalid(`${what}: element ${i} is ${describe(value)}; ${datatype} needs numbers`);
        }
        out[i] = value;
      }
      return asBytes(out);
    }
    case 'INT64':
    case 'UINT64': {
      const signed = datatype === 'INT64';
      const out = signed ? new BigInt64Array(values.length) : new BigUint64Array(values.length);
      const min = signed ? -(2n ** 63n) : 0n;
      const max = signed ? 2n ** 63n - 1n : 2n ** 64n - 1n;
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        let big: bigint;
        if (typeof value === 'bigint') big = value;
        else if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
        else {
          throw invalid(
            `${what}: element ${i} is ${String(value)}; ${datatype} needs bigints or safe integers`,
          );
        }
        if (big < min || big > max)
          throw invalid(`${what}: element ${i} (${big}) is out of range for ${datatype}`);
        out[i] = big;
      }
      return asBytes(out);
    }
    default: {
      const range = intRanges[datatype];
      const Natural = naturalArray[datatype];
      if (range === undefined || Natural === undefined)
        throw invalid(`${what}: cannot encode datatype ${datatype}`);
      const out = new Natural(values.length) as Exclude<TypedArray, BigInt64Array | BigUint64Array>;
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (typeof value !== 'number' || !Number.isInteger(value) || value < range[0] || value > range[1]) {
          throw invalid(`${what}: element ${i} (${String(value)}) is not an integer in ${datatype}'s range`);
        }
        out[i] = value;
      }
      return asBytes(out);
    }
  }
}

/**
 * Validates an input tensor and turns it into wire form. Every check (datatype, shape, element
 * count, value ranges) happens here, before anything reaches the network.
 */
export function encodeTensor(input: InputTensor): EncodedTensor {
  if (typeof input !== 'object' || input === null)
    throw invalid(`input must be an object, got ${describe(input)}`);
  const { name, datatype } = input;
  if (typeof name !== 'string' || name === '') throw invalid('input: `name` must be a non-empty string');
  const what = `input '${name}'`;
  if (!isDataType(datatype)) throw invalid(`${what}: unknown datatype ${JSON.stringify(datatype)}`);
  if (input.sharedMemory !== undefined) return encodeSharedMemoryInput(input, what);
  const data = input.data as unknown;
  if (data === undefined || data === null)
    throw invalid(`${what}: \`data\` (or \`sharedMemory\`) is missing`);
  const given = input.shape;
  if (given !== undefined && !Array.isArray(given))
    throw invalid(`${what}: shape must be an array of integers`);
  const defaultLength = isTypedArray(data) ? data.length : Array.isArray(data) ? data.length : 0;
  const shape = given ?? [
    datatype !== 'BOOL' && datatype !== 'UINT8' && data instanceof Uint8Array
      ? data.byteLength / Math.max(1, elementSize(datatype))
      : defaultLength,
  ];
  const count = elementCount(shape, what);
  if (datatype === 'BYTES') {
    if (!Array.isArray(data)) {
      throw invalid(`${what}: BYTES data must be an array of strings or Uint8Arrays, got ${describe(data)}`);
    }
    if (data.length !== count) throw invalid(`${what}: ${data.length} elements given, shape needs ${count}`);
    return { name, datatype, shape: [...shape], raw: encodeBytesElements(data, what) };
  }
  return { name, datatype, shape: [...shape], raw: encodeFixed(input, count, what) };
}

function encodeSharedMemoryInput(input: SharedMemoryInputTensor, what: string): EncodedTensor {
  const { region, byteSize, offset = 0 } = input.sharedMemory;
  if (input.data !== undefined) throw invalid(`${what}: give either \`data\` or \`sharedMemory\`, not both`);
  if (typeof region !== 'string' || region === '')
    throw invalid(`${what}: sharedMemory.region must be a region name`);
  if (!Number.isSafeInteger(byteSize) || byteSize < 0)
    throw invalid(`${what}: sharedMemory.byteSize must be >= 0`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalid(`${what}: sharedMemory.offset must be >= 0`);
  if (!Array.isArray(input.shape)) throw invalid(`${what}: a shared-memory input needs its shape`);
  const count = elementCount(input.shape, what);
  const size = elementSize(input.datatype);
  if (size > 0 && count * size !== byteSize) {
    throw invalid(
      `${what}: shape needs ${count * size} bytes of ${input.datatype}, sharedMemory.byteSize is ${byteSize}`,
    );
  }
  return {
    name: input.name,
    datatype: input.datatype,
    shape: [...input.shape],
    raw: new Uint8Array(0),
    parameters: sharedMemoryParameters(input.sharedMemory),
  };
}

/** Decodes wire data into the datatype's natural array, as a view when alignment allows. */
export function decodeTensorData(tensor: EncodedTensor): TensorOutputData {
  const { datatype, raw, shape, name } = tensor;
  const what = `tensor '${name}'`;
  const count = elementCount(shape, what);
  if (datatype === 'BYTES') return decodeBytesElements(raw, count, what);
  const size = elementSize(datatype);
  if (raw.byteLength !== count * size) {
    throw new InfergateError(
      ErrorCode.DataLoss,
      `${what}: ${raw.byteLength} bytes for ${count} ${datatype} elements (expected ${count * size})`,
    );
  }
  if (datatype === 'FP16' || datatype === 'BF16') return widenHalf(datatype, viewAs(Uint16Array, raw, 2));
  if (datatype === 'BOOL' || datatype === 'UINT8') return raw;
  const Natural = naturalArray[datatype];
  if (Natural === undefined)
    throw new InfergateError(ErrorCode.Internal, `${what}: no decoder for ${datatype}`);
  return viewAs(Natural as unknown as TypedViewConstructor<Exclude<TensorOutputData, Buffer[]>>, raw, size);
}

type TypedViewConstructor<T> = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  new (length: number): T;
};

function viewAs<T extends ArrayBufferView>(Ctor: TypedViewConstructor<T>, raw: Uint8Array, size: number): T {
  const length = raw.byteLength / size;
  if (raw.byteOffset % size === 0) return new Ctor(raw.buffer, raw.byteOffset, length);
  const copy = new Ctor(length);
  new Uint8Array(copy.buffer).set(raw);
  return copy;
}

/** Every half-precision value as float32, built on first use (256 KiB): one lookup per element. */
let halfTable: Float32Array | undefined;

function widenHalf(datatype: 'FP16' | 'BF16', bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  if (datatype === 'BF16') {
    // bfloat16 is the top half of a float32: shift the bits into place.
    const words = new Uint32Array(out.buffer);
    for (let i = 0; i < bits.length; i++) words[i] = (bits[i] as number) << 16;
    return out;
  }
  if (bits.length < 4096) {
    for (let i = 0; i < bits.length; i++) out[i] = halfBitsToFloat(bits[i] as number);
    return out;
  }
  if (halfTable === undefined) {
    halfTable = new Float32Array(0x10000);
    for (let i = 0; i < 0x10000; i++) halfTable[i] = halfBitsToFloat(i);
  }
  const table = halfTable;
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i] as number] as number;
  return out;
}

/**
 * An output written into the caller's memory (`RequestedOutput.into`), as a typed array of its
 * datatype over that memory: `into` itself when it is already that array with the output's element
 * count (FP16/BF16 as their Uint16Array bit patterns). `tensor.raw` is the written bytes, a view of
 * `into` (see writeOutputsInto); anything else decodes as usual.
 */
export function viewOutputInto(tensor: EncodedTensor, into: ArrayBufferView): TensorOutputData {
  const { datatype, raw } = tensor;
  if (datatype === 'BYTES' || raw.buffer !== into.buffer) return decodeTensorData(tensor);
  const count = elementCount(tensor.shape, `tensor '${tensor.name}'`);
  const View = intoArray[datatype];
  if (into instanceof View && (into as TypedArray).length === count && into.byteOffset === raw.byteOffset)
    return into as TensorOutputData;
  if (raw.byteLength !== count * elementSize(datatype) || raw.byteOffset % elementSize(datatype) !== 0)
    return decodeTensorData(tensor);
  return new View(raw.buffer as ArrayBuffer, raw.byteOffset, count) as TensorOutputData;
}
