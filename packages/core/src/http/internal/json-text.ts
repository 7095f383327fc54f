// JSON.stringify cannot write a bigint, and KServe's JSON carries 64-bit integers as plain numbers
// (INT64/UINT64 tensor data, uint64 parameters such as priority or sequence ids). Bigints are written
// as a marker string first, then the marker is replaced by the digits.
const MARK = '\u0001bigint:';
const MARKED = /"\\u0001bigint:(-?\d+)"/g;

/** JSON text in which bigints appear as exact integer literals. */
export function jsonText(value: unknown): string {
  let sawBigint = false;
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'bigint') return item;
    sawBigint = true;
    return `${MARK}${item.toString()}`;
  });
  return sawBigint ? text.replace(MARKED, '$1') : text;
}
