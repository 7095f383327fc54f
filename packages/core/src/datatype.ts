/** Triton / KServe v2 tensor datatypes, as they appear on the wire. */
export const DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'BF16',
  'FP32',
  'FP64',
  'BYTES',
] as const;

export type DataType = (typeof DATATYPES)[number];

const sizes: Readonly<Record<DataType, number>> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  BF16: 2,
  FP32: 4,
  FP64: 8,
  BYTES: 0,
};

export function isDataType(value: unknown): value is DataType {
  return typeof value === 'string' && Object.hasOwn(sizes, value);
}

/** Bytes per element; 0 for BYTES, whose elements have variable length. */
export function elementSize(datatype: DataType): number {
  return sizes[datatype];
}

/** Triton's model-config enum names (TYPE_FP32, TYPE_STRING, …) mapped to wire datatypes. */
export function datatypeFromConfigName(name: string): DataType | undefined {
  const bare = name.startsWith('TYPE_') ? name.slice(5) : name;
  if (bare === 'STRING') return 'BYTES';
  return isDataType(bare) ? bare : undefined;
}
