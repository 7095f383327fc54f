import { ScalarType } from '@bufbuild/protobuf';

// The range of each protobuf integer type, for the text-format parser and the builder alike: both
// refuse a value the field cannot hold instead of letting it wrap on the wire.

const INT32: readonly [bigint, bigint] = [-(2n ** 31n), 2n ** 31n - 1n];
const UINT32: readonly [bigint, bigint] = [0n, 2n ** 32n - 1n];
const INT64: readonly [bigint, bigint] = [-(2n ** 63n), 2n ** 63n - 1n];
const UINT64: readonly [bigint, bigint] = [0n, 2n ** 64n - 1n];

/** The smallest and largest value of each integer scalar type. */
export const INTEGER_RANGES: Partial<Record<ScalarType, readonly [bigint, bigint]>> = {
  [ScalarType.INT32]: INT32,
  [ScalarType.SINT32]: INT32,
  [ScalarType.SFIXED32]: INT32,
  [ScalarType.UINT32]: UINT32,
  [ScalarType.FIXED32]: UINT32,
  [ScalarType.INT64]: INT64,
  [ScalarType.SINT64]: INT64,
  [ScalarType.SFIXED64]: INT64,
  [ScalarType.UINT64]: UINT64,
  [ScalarType.FIXED64]: UINT64,
};

/** Whether values of the type are bigints in protobuf-es (the 64-bit integers). */
export function isLong(type: ScalarType): boolean {
  const range = INTEGER_RANGES[type];
  return range !== undefined && range[1] > 2n ** 32n;
}
