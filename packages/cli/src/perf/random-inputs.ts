import { randomBytes } from 'node:crypto';
import {
  type DataInputTensor,
  type DataType,
  elementCount,
  elementSize,
  isDataType,
  type ModelMetadata,
} from '@infergate/core';
import { usageError } from '../internal/command-line.js';

/** `NAME:DIMS` → a shape for a variable-size input (`--shape INPUT0:1,16`). */
export function parseShapeOverride(text: string): [string, number[]] {
  const colon = text.lastIndexOf(':');
  const name = text.slice(0, colon);
  const dims = text
    .slice(colon + 1)
    .split(/[,x]/)
    .map(Number);
  if (colon <= 0 || dims.some((dim) => !Number.isSafeInteger(dim) || dim < 0)) {
    throw usageError(`--shape '${text}' must be NAME:DIMS, e.g. INPUT0:1,16`);
  }
  return [name, dims];
}

function randomData(datatype: DataType, count: number): DataInputTensor['data'] {
  switch (datatype) {
    case 'FP32':
      return Float32Array.from({ length: count }, () => Math.random());
    case 'FP64':
      return Float64Array.from({ length: count }, () => Math.random());
    case 'BOOL':
      return Array.from({ length: count }, () => Math.random() < 0.5);
    case 'BYTES':
      return Array.from({ length: count }, () => Math.random().toString(36).slice(2));
    default:
      // Integers and half floats as raw little-endian bytes; random bit patterns are valid values
      // (a half-float NaN included, which the server passes through like any other).
      return new Uint8Array(randomBytes(count * elementSize(datatype)));
  }
}

/**
 * Random inputs for every input the model declares. A variable dimension (-1) becomes `batchSize`
 * when it is the first and the model batches, 1 elsewhere, unless `shapes` names the input.
 */
export function randomInputs(
  metadata: ModelMetadata,
  batches: boolean,
  batchSize: number,
  shapes: ReadonlyMap<string, number[]>,
): DataInputTensor[] {
  return metadata.inputs.map((input) => {
    const datatype = input.datatype.toUpperCase();
    if (!isDataType(datatype)) {
      throw usageError(
        `input ${input.name}: the server reports datatype '${input.datatype}', which is not supported`,
      );
    }
    const shape =
      shapes.get(input.name) ??
      input.shape.map((dim, index) => (dim >= 0 ? dim : index === 0 && batches ? batchSize : 1));
    return { name: input.name, datatype, shape, data: randomData(datatype, elementCount(shape)) };
  });
}
