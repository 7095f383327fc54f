import { readFile } from 'node:fs/promises';
import { type DataInputTensor, type DataType, elementCount, isDataType } from '@infergate/core';
import { readNpy } from '../npy.js';
import { usageError } from './command-line.js';

export const INPUT_HELP = `Inputs (repeat --input for each tensor):
  --input NAME:DTYPE:SHAPE:VALUES   VALUES are comma-separated: 1,2,3 or
                                    true,false for BOOL, words for BYTES.
  --input NAME:DTYPE:SHAPE:@FILE    FILE is a .json array (nested or flat)
                                    or a NumPy .npy file.
  SHAPE is dims separated by commas or x (2,8 or 2x8). With a .npy file,
  DTYPE and SHAPE may be left empty (NAME:::@in.npy) to take the file's.`;

function parseShape(text: string, spec: string): number[] | undefined {
  if (text === '') return undefined;
  const dims = text.replace(/^\[|\]$/g, '').split(/[,x]/);
  return dims.map((dim) => {
    const value = Number(dim.trim());
    if (dim.trim() === '' || !Number.isSafeInteger(value) || value < 0) {
      throw usageError(`--input '${spec}': bad dimension '${dim}' in shape '${text}'`);
    }
    return value;
  });
}

function flatten(value: unknown): unknown[] {
  return Array.isArray(value) ? value.flatMap(flatten) : [value];
}

/** JSON/command-line values → the array createTritonClient().infer takes for the datatype. */
function convert(values: readonly unknown[], datatype: DataType, spec: string): DataInputTensor['data'] {
  const bad = (value: unknown) =>
    usageError(`--input '${spec}': ${JSON.stringify(value)} is not a valid ${datatype} value`);
  if (datatype === 'BYTES')
    return values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value)));
  if (datatype === 'BOOL') {
    return values.map((value) => {
      if (value === true || value === 'true' || value === 1 || value === '1') return true;
      if (value === false || value === 'false' || value === 0 || value === '0') return false;
      throw bad(value);
    });
  }
  if (datatype === 'INT64' || datatype === 'UINT64') {
    return values.map((value) => {
      try {
        return BigInt(value as string | number);
      } catch {
        throw bad(value);
      }
    });
  }
  return values.map((value) => {
    const number = typeof value === 'number' ? value : Number(value);
    if (
      typeof value === 'boolean' ||
      (typeof value === 'string' && value.trim() === '') ||
      Number.isNaN(number)
    ) {
      throw bad(value);
    }
    return number;
  });
}

/**
 * Parses `NAME:DTYPE:SHAPE:SOURCE` into an input tensor. Values are checked against the shape here,
 * so a wrong count is a usage error before anything is sent.
 */
export async function parseInputSpec(spec: string): Promise<DataInputTensor> {
  const parts = spec.split(':');
  if (parts.length < 4) {
    throw usageError(`--input '${spec}' must be NAME:DTYPE:SHAPE:VALUES or NAME:DTYPE:SHAPE:@FILE`);
  }
  const [name = '', typeText = '', shapeText = ''] = parts;
  // Values may hold ':' themselves (BYTES), so everything after the third ':' is the source.
  const source = parts.slice(3).join(':');
  if (name === '') throw usageError(`--input '${spec}': the tensor name is empty`);
  const datatypeText = typeText.toUpperCase();
  if (datatypeText !== '' && !isDataType(datatypeText)) {
    throw usageError(`--input '${spec}': unknown datatype '${typeText}' (FP32, INT64, BYTES, …)`);
  }
  let shape = parseShape(shapeText, spec);
  if (source.startsWith('@') && source.toLowerCase().endsWith('.npy')) {
    const array = readNpy(await readSource(source.slice(1), spec));
    if (datatypeText !== '' && datatypeText !== array.datatype) {
      throw usageError(`--input '${spec}': the file holds ${array.datatype}, not ${datatypeText}`);
    }
    if (shape !== undefined && elementCount(shape) !== elementCount(array.shape)) {
      throw usageError(`--input '${spec}': the file's shape [${array.shape}] does not fit [${shape}]`);
    }
    return { name, datatype: array.datatype, shape: shape ?? array.shape, data: npyData(array.data) };
  }
  if (datatypeText === '') throw usageError(`--input '${spec}': a datatype is required without a .npy file`);
  const datatype = datatypeText as DataType;
  let values: unknown[];
  if (source.startsWith('@')) {
    const text = Buffer.from(await readSource(source.slice(1), spec)).toString('utf8');
    try {
      values = flatten(JSON.parse(text));
    } catch (error) {
      throw usageError(`--input '${spec}': ${source.slice(1)} is not JSON (${(error as Error).message})`);
    }
  } else values = source === '' ? [] : source.split(',');
  shape ??= [values.length];
  const count = elementCount(shape);
  if (count !== values.length) {
    throw usageError(`--input '${spec}': shape [${shape}] needs ${count} values, got ${values.length}`);
  }
  return { name, datatype, shape, data: convert(values, datatype, spec) };
}

function npyData(data: ArrayBufferView | readonly Uint8Array[]): DataInputTensor['data'] {
  if (!ArrayBuffer.isView(data)) return data;
  return data as unknown as Exclude<DataInputTensor['data'], readonly unknown[]>;
}

async function readSource(path: string, spec: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw usageError(`--input '${spec}': cannot read ${path} (${code})`);
  }
}
