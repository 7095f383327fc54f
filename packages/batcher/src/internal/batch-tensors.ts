import { type EncodedTensor, ErrorCode, InfergateError, type InferResponse } from '@infergate/core';

/**
 * Concatenates the members' inputs along the batch dimension. Wire bytes are little-endian rows one
 * after another, and BYTES elements carry their own length prefixes, so for every datatype this is
 * plain byte concatenation (one copy per input).
 */
export function concatInputs(
  members: readonly (readonly EncodedTensor[])[],
  totalRows: number,
): EncodedTensor[] {
  const first = members[0] as readonly EncodedTensor[];
  const merged: EncodedTensor[] = new Array(first.length);
  for (let index = 0; index < first.length; index++) {
    const template = first[index] as EncodedTensor;
    let byteLength = 0;
    for (let member = 0; member < members.length; member++) {
      byteLength += ((members[member] as readonly EncodedTensor[])[index] as EncodedTensor).raw.byteLength;
    }
    // One allocation and one copy per member: the members' bytes go straight into the batch input.
    const raw = new Uint8Array(byteLength);
    let offset = 0;
    for (let member = 0; member < members.length; member++) {
      const part = ((members[member] as readonly EncodedTensor[])[index] as EncodedTensor).raw;
      raw.set(part, offset);
      offset += part.byteLength;
    }
    const tensor: EncodedTensor = {
      name: template.name,
      datatype: template.datatype,
      shape: withRows(template.shape, totalRows),
      raw,
    };
    if (template.parameters !== undefined) tensor.parameters = template.parameters;
    merged[index] = tensor;
  }
  return merged;
}

/** `shape` with its first dimension replaced by `rows`. */
function withRows(shape: readonly number[], rows: number): number[] {
  const result = shape.slice();
  result[0] = rows;
  return result;
}

function elementsPerRow(shape: readonly number[]): number {
  let count = 1;
  for (let i = 1; i < shape.length; i++) count *= shape[i] as number;
  return count;
}

/** Byte offset where each row starts (and one past the end), for an output of `totalRows` rows. */
function rowOffsets(output: EncodedTensor, totalRows: number, model: string): Float64Array {
  const offsets = new Float64Array(totalRows + 1);
  const { raw } = output;
  if (output.datatype !== 'BYTES') {
    // A batch of zero-row calls has an empty output: every member's slice is empty.
    const rowBytes = totalRows === 0 && raw.byteLength === 0 ? 0 : raw.byteLength / totalRows;
    if (!Number.isInteger(rowBytes)) {
      throw new InfergateError(
        ErrorCode.DataLoss,
        `output '${output.name}' has ${raw.byteLength} bytes, not a whole number of bytes per row for ${totalRows} rows`,
        { model },
      );
    }
    for (let row = 0; row <= totalRows; row++) offsets[row] = row * rowBytes;
    return offsets;
  }
  const perRow = elementsPerRow(output.shape);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const malformed = () =>
    new InfergateError(
      ErrorCode.DataLoss,
      `BYTES output '${output.name}' does not hold ${totalRows} rows of ${perRow} length-prefixed elements`,
      { model },
    );
  let offset = 0;
  for (let row = 0; row < totalRows; row++) {
    offsets[row] = offset;
    for (let element = 0; element < perRow; element++) {
      if (offset + 4 > raw.byteLength) throw malformed();
      offset += 4 + view.getUint32(offset, true);
    }
    if (offset > raw.byteLength) throw malformed();
  }
  if (offset !== raw.byteLength) throw malformed();
  offsets[totalRows] = offset;
  return offsets;
}

/**
 * Splits a batch response back into one output list per member, by row ranges. Slices are views
 * (`subarray`) of the response bytes, not copies. Every output must carry the batch dimension first;
 * one that does not cannot be attributed to callers, so the whole batch fails with INTERNAL.
 */
export function splitOutputs(
  response: InferResponse,
  memberRows: readonly number[],
  model: string,
): EncodedTensor[][] {
  const members = memberRows.length;
  let totalRows = 0;
  for (let index = 0; index < members; index++) totalRows += memberRows[index] as number;
  const { outputs } = response;
  // Each member's list has its final length from the start: an empty array's first push reserves
  // room for 17 elements, about 150 bytes per caller for the usual one or two outputs.
  const perMember: EncodedTensor[][] = new Array(members);
  for (let index = 0; index < members; index++) perMember[index] = new Array(outputs.length);
  for (let outputIndex = 0; outputIndex < outputs.length; outputIndex++) {
    const output = outputs[outputIndex] as EncodedTensor;
    if (output.shape.length === 0 || output.shape[0] !== totalRows) {
      throw new InfergateError(
        ErrorCode.Internal,
        `output '${output.name}' of model '${model}' has shape [${output.shape.join(',')}], whose first dimension is not the batch's ${totalRows} rows; the model's outputs cannot be split between batched calls`,
        { model },
      );
    }
    const offsets = rowOffsets(output, totalRows, model);
    const { name, datatype, parameters, raw } = output;
    let row = 0;
    for (let index = 0; index < members; index++) {
      const rows = memberRows[index] as number;
      const start = offsets[row] as number;
      row += rows;
      const slice: EncodedTensor = {
        name,
        datatype,
        shape: withRows(output.shape, rows),
        raw: raw.subarray(start, offsets[row] as number),
      };
      if (parameters !== undefined) slice.parameters = parameters;
      (perMember[index] as EncodedTensor[])[outputIndex] = slice;
    }
  }
  return perMember;
}
