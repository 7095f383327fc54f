import { ErrorCode, InfergateError } from './errors.js';

/**
 * A request or response parameter. Plain JavaScript values map to Triton's InferParameter kinds:
 * boolean → bool, string → string, safe integer → int64, other number → double, bigint → int64
 * (uint64 above int64's range). Wrap a value to pick the kind explicitly.
 */
export type ParameterValue =
  | boolean
  | number
  | bigint
  | string
  | { readonly kind: 'double'; readonly value: number }
  | { readonly kind: 'int64'; readonly value: bigint }
  | { readonly kind: 'uint64'; readonly value: bigint };

export type Parameters = Readonly<Record<string, ParameterValue>>;

export const param = {
  double: (value: number) => ({ kind: 'double', value }) as const,
  int64: (value: bigint | number) => ({ kind: 'int64', value: BigInt(value) }) as const,
  uint64: (value: bigint | number) => ({ kind: 'uint64', value: BigInt(value) }) as const,
};

export type WireParameter =
  | { case: 'boolParam'; value: boolean }
  | { case: 'int64Param'; value: bigint }
  | { case: 'stringParam'; value: string }
  | { case: 'doubleParam'; value: number }
  | { case: 'uint64Param'; value: bigint };

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

export function toWireParameter(name: string, value: ParameterValue): WireParameter {
  switch (typeof value) {
    case 'boolean':
      return { case: 'boolParam', value };
    case 'string':
      return { case: 'stringParam', value };
    case 'number':
      if (Number.isSafeInteger(value)) return { case: 'int64Param', value: BigInt(value) };
      return { case: 'doubleParam', value };
    case 'bigint':
      if (value >= INT64_MIN && value <= INT64_MAX) return { case: 'int64Param', value };
      if (value > INT64_MAX && value <= UINT64_MAX) return { case: 'uint64Param', value };
      break;
    case 'object':
      if (value !== null) {
        if (value.kind === 'double' && typeof value.value === 'number')
          return { case: 'doubleParam', value: value.value };
        if (value.kind === 'int64' && value.value >= INT64_MIN && value.value <= INT64_MAX) {
          return { case: 'int64Param', value: value.value };
        }
        if (value.kind === 'uint64' && value.value >= 0n && value.value <= UINT64_MAX) {
          return { case: 'uint64Param', value: value.value };
        }
      }
      break;
  }
  throw new InfergateError(
    ErrorCode.InvalidArgument,
    `parameter '${name}': ${String(value)} is not a boolean, string, number, bigint in 64-bit range, or param.*() value`,
  );
}

export function fromWireParameter(wire: {
  case: string | undefined;
  value?: unknown;
}): ParameterValue | undefined {
  switch (wire.case) {
    case 'boolParam':
    case 'stringParam':
    case 'doubleParam':
      return wire.value as boolean | string | number;
    case 'int64Param':
    case 'uint64Param': {
      const big = wire.value as bigint;
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(big)
        : big;
    }
    default:
      return undefined;
  }
}
