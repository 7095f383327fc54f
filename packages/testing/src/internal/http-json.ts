// JSON helpers of the HTTP endpoints: bigints written as exact integer literals (INT64 data,
// 64-bit statistics), and protobuf-JSON's quoted 64-bit integers turned back into numbers, as
// Triton's own HTTP answers carry them.
const MARK = '\u0001bigint:';
const MARKED = /"\\u0001bigint:(-?\d+)"/g;

export function jsonText(value: unknown): string {
  let sawBigint = false;
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'bigint') return item;
    if (item >= BigInt(Number.MIN_SAFE_INTEGER) && item <= BigInt(Number.MAX_SAFE_INTEGER))
      return Number(item);
    sawBigint = true;
    return `${MARK}${item.toString()}`;
  });
  return sawBigint ? text.replace(MARKED, '$1') : text;
}

/** Keys whose values stay strings even when they look like numbers. */
const TEXT_KEYS = new Set(['name', 'version', 'versions', 'key', 'id', 'reason', 'state', 'string_param']);

/** Walks protobuf JSON and turns digit strings (its 64-bit integers) into numbers, except under TEXT_KEYS. */
export function numbersFromProtoJson(value: unknown, key = ''): unknown {
  if (TEXT_KEYS.has(key)) return value;
  if (typeof value === 'string') return /^-?\d+$/.test(value) ? Number(value) : value;
  if (Array.isArray(value)) return value.map((item) => numbersFromProtoJson(item, key));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) out[name] = numbersFromProtoJson(item, name);
    return out;
  }
  return value;
}
