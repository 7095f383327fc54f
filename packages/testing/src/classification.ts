import { decodeTensorData, type EncodedTensor, encodeTensor } from '@infergate/core';
import { status } from './internal/grpc-status.js';
import { RpcError } from './rpc-error.js';

/**
 * Triton's classification extension: the output becomes a BYTES tensor of the top `k` entries per
 * batch row, each "value:index" (or "value:index:label" when the model has labels for the output),
 * highest first, shaped [batch, min(k, n)] for batching models and [min(k, n)] otherwise. Values are
 * printed like C++ std::to_string(float) ("0.750000"). Numeric datatypes only (not BYTES).
 */
export function classify(
  tensor: EncodedTensor,
  k: number,
  batching: boolean,
  labels: readonly string[] | undefined,
  specRank?: number,
): EncodedTensor {
  if (tensor.datatype === 'BYTES') {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `class result not available for output due to unsupported type 'BYTES'`,
    );
  }
  const values = decodeTensorData(tensor) as ArrayLike<number | bigint | boolean>;
  // The first dimension is the batch when the model batches (and, for any-shape test models, when
  // the output has more dimensions than its configured dims).
  const batched =
    batching && tensor.shape.length > 0 && (specRank === undefined || tensor.shape.length > specRank);
  const rows = batched ? (tensor.shape[0] as number) : 1;
  const perRow = rows === 0 ? 0 : values.length / rows;
  const count = Math.min(k, perRow);
  const strings: string[] = [];
  for (let row = 0; row < rows; row++) {
    const entries = Array.from({ length: perRow }, (_, index) => ({
      index,
      value: Number(values[row * perRow + index]),
    }));
    entries.sort((a, b) => b.value - a.value || a.index - b.index);
    for (const { index, value } of entries.slice(0, count)) {
      const label = labels?.[index];
      strings.push(`${value.toFixed(6)}:${index}${label ? `:${label}` : ''}`);
    }
  }
  return encodeTensor({
    name: tensor.name,
    datatype: 'BYTES',
    shape: batched ? [rows, count] : [count],
    data: strings,
  });
}
