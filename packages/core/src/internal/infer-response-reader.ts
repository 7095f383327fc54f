// A hand-written reader for the usual ModelInferResponse: names, outputs (name, datatype, shape) and
// raw_output_contents. The protobuf runtime's generic decoder walks the schema for every field and
// builds each message through `create`; for a small tensor that costs more than the rest of the
// answer's handling. This reads the same bytes straight into the same object shape, and gives up
// (returns undefined, so the caller uses the runtime) on anything else: parameters, typed contents,
// unknown fields, non-ASCII text, dimensions beyond 2^49, or malformed input. A property test holds
// the two equal on every message the fast path accepts.
import type { ModelInferResponse, ModelInferResponse_InferOutputTensor } from '../gen/grpc_service_pb.js';

const RESPONSE = 'inference.ModelInferResponse';
const OUTPUT = 'inference.ModelInferResponse.InferOutputTensor';

/**
 * Names read lately (model, version, output names, datatypes), each in a slot picked by its length
 * and first and last bytes. The same names come back in every answer; building each again from its
 * bytes, a character at a time, was about 400 bytes of garbage per answer. A slot keeps the last
 * name read into it, so a collision only costs a fresh read. Request ids, new on every call, are
 * read without it.
 */
const NAME_SLOTS = 64;
const recentNames: (string | undefined)[] = new Array(NAME_SLOTS).fill(undefined);

/** Reading position and bounds; every method returns -1 (or undefined) when the input is not usable. */
class Cursor {
  pos: number;
  readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array, pos: number) {
    this.bytes = bytes;
    this.pos = pos;
  }

  /** A varint below 2^49 (always a safe integer), or -1. */
  varint(end: number): number {
    const bytes = this.bytes;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= end) return -1;
      const byte = bytes[this.pos++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    return -1;
  }

  /** An ASCII string of `length` bytes, or undefined. */
  ascii(length: number, end: number): string | undefined {
    const start = this.pos;
    const stop = start + length;
    if (stop > end) return undefined;
    const bytes = this.bytes;
    let text = '';
    for (let i = start; i < stop; i++) {
      const byte = bytes[i] as number;
      if (byte > 0x7f) return undefined;
      text += String.fromCharCode(byte);
    }
    this.pos = stop;
    return text;
  }

  /** As `ascii`, for a name that repeats from answer to answer: the string read last time when equal. */
  name(length: number, end: number): string | undefined {
    const start = this.pos;
    const stop = start + length;
    if (length === 0 || stop > end) return this.ascii(length, end);
    const bytes = this.bytes;
    const slot =
      (length * 31 + (bytes[start] as number) * 7 + (bytes[stop - 1] as number)) & (NAME_SLOTS - 1);
    const known = recentNames[slot];
    if (known !== undefined && known.length === length) {
      // A cached name is ASCII: a byte above 0x7f never matches, and falls to `ascii`, which refuses it.
      let index = 0;
      while (index < length && known.charCodeAt(index) === bytes[start + index]) index++;
      if (index === length) {
        this.pos = stop;
        return known;
      }
    }
    const text = this.ascii(length, end);
    if (text !== undefined) recentNames[slot] = text;
    return text;
  }
}

function readOutput(cursor: Cursor, end: number): ModelInferResponse_InferOutputTensor | undefined {
  let name = '';
  let datatype = '';
  const shape: bigint[] = [];
  while (cursor.pos < end) {
    const key = cursor.varint(end);
    if (key < 0 || key > 0xffffffff) return undefined;
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 3 && wire === 0) {
      const dim = cursor.varint(end);
      if (dim < 0) return undefined;
      shape.push(BigInt(dim));
      continue;
    }
    if (wire !== 2) return undefined;
    const length = cursor.varint(end);
    if (length < 0 || cursor.pos + length > end) return undefined;
    if (field === 1 || field === 2) {
      const text = cursor.name(length, end);
      if (text === undefined) return undefined;
      if (field === 1) name = text;
      else datatype = text;
    } else if (field === 3) {
      // Packed dimensions.
      const stop = cursor.pos + length;
      while (cursor.pos < stop) {
        const dim = cursor.varint(stop);
        if (dim < 0) return undefined;
        shape.push(BigInt(dim));
      }
    } else return undefined;
  }
  return { $typeName: OUTPUT, name, datatype, shape, parameters: {} } as ModelInferResponse_InferOutputTensor;
}

/** The ModelInferResponse in `bytes`, or undefined when it holds anything this reader leaves to the runtime. */
export function readModelInferResponse(bytes: Uint8Array): ModelInferResponse | undefined {
  const end = bytes.byteLength;
  const cursor = new Cursor(bytes, 0);
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const outputs: ModelInferResponse_InferOutputTensor[] = [];
  const rawOutputContents: Uint8Array[] = [];
  while (cursor.pos < end) {
    const key = cursor.varint(end);
    if (key < 0 || key > 0xffffffff || (key & 7) !== 2) return undefined;
    const field = key >>> 3;
    const length = cursor.varint(end);
    if (length < 0 || cursor.pos + length > end) return undefined;
    if (field === 6) {
      rawOutputContents.push(bytes.subarray(cursor.pos, cursor.pos + length));
      cursor.pos += length;
    } else if (field === 5) {
      const output = readOutput(cursor, cursor.pos + length);
      if (output === undefined) return undefined;
      outputs.push(output);
    } else if (field >= 1 && field <= 3) {
      const text = field === 3 ? cursor.ascii(length, end) : cursor.name(length, end);
      if (text === undefined) return undefined;
      if (field === 1) modelName = text;
      else if (field === 2) modelVersion = text;
      else id = text;
    } else return undefined;
  }
  return {
    $typeName: RESPONSE,
    modelName,
    modelVersion,
    id,
    parameters: {},
    outputs,
    rawOutputContents,
  } as ModelInferResponse;
}
