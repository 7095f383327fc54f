import { type DataType, ErrorCode, elementCount, elementSize, InfergateError } from '@infergate/core';

/**
 * A tensor as a NumPy `.npy` file holds it. `data` is the datatype's natural typed array (FP16 as
 * its 16-bit patterns in a Uint16Array, BOOL as a Uint8Array of 0/1) or, for BYTES, the elements.
 */
export interface NpyArray {
  datatype: DataType;
  shape: number[];
  data: ArrayBufferView | readonly Uint8Array[];
}

const MAGIC = Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // "\x93NUMPY"

/** NumPy type codes (without byte order) of the fixed-size datatypes; BF16 has none in NumPy. */
const descrByType: Partial<Record<DataType, string>> = {
  BOOL: 'b1',
  UINT8: 'u1',
  UINT16: 'u2',
  UINT32: 'u4',
  UINT64: 'u8',
  INT8: 'i1',
  INT16: 'i2',
  INT32: 'i4',
  INT64: 'i8',
  FP16: 'f2',
  FP32: 'f4',
  FP64: 'f8',
};
const typeByDescr = new Map(Object.entries(descrByType).map(([type, code]) => [code, type as DataType]));

function invalid(message: string): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, `.npy: ${message}`);
}

function typedView(datatype: DataType, bytes: Uint8Array, count: number): ArrayBufferView {
  // Copy into a fresh, aligned buffer: the header length makes the payload offset arbitrary.
  // (Buffer#slice would share memory, so copy through a fresh Uint8Array.)
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const buffer = copy.buffer;
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
      return new Uint8Array(buffer, 0, count);
    case 'INT8':
      return new Int8Array(buffer, 0, count);
    case 'UINT16':
    case 'FP16':
      return new Uint16Array(buffer, 0, count);
    case 'INT16':
      return new Int16Array(buffer, 0, count);
    case 'UINT32':
      return new Uint32Array(buffer, 0, count);
    case 'INT32':
      return new Int32Array(buffer, 0, count);
    case 'UINT64':
      return new BigUint64Array(buffer, 0, count);
    case 'INT64':
      return new BigInt64Array(buffer, 0, count);
    case 'FP32':
      return new Float32Array(buffer, 0, count);
    case 'FP64':
      return new Float64Array(buffer, 0, count);
    default:
      throw invalid(`no typed array for ${datatype}`);
  }
}

/** The value of `'key': value` in the header dict (the header is a Python literal, not JSON). */
function headerField(header: string, key: string): string {
  const match = new RegExp(`['"]${key}['"]\\s*:\\s*('[^']*'|"[^"]*"|True|False|\\([^)]*\\))`).exec(header);
  if (match === null) throw invalid(`the header has no '${key}': ${header.trim()}`);
  return match[1] as string;
}

function parseShape(text: string): number[] {
  const inner = text.slice(1, -1).trim();
  if (inner === '') return [];
  return inner
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const dim = Number(part.replace(/L$/, ''));
      if (!Number.isSafeInteger(dim) || dim < 0) throw invalid(`bad dimension '${part}' in shape ${text}`);
      return dim;
    });
}

function swapBytes(bytes: Uint8Array, size: number): Uint8Array {
  const swapped = new Uint8Array(bytes.length);
  for (let offset = 0; offset < bytes.length; offset += size) {
    for (let index = 0; index < size; index++)
      swapped[offset + index] = bytes[offset + size - 1 - index] as number;
  }
  return swapped;
}

function readStrings(payload: Uint8Array, count: number, order: string, kind: string, width: number) {
  const itemBytes = kind === 'U' ? width * 4 : width;
  if (payload.length < count * itemBytes) throw invalid(`the data is shorter than its shape says`);
  const elements: Uint8Array[] = [];
  for (let index = 0; index < count; index++) {
    const item = payload.subarray(index * itemBytes, (index + 1) * itemBytes);
    if (kind === 'S') {
      // NumPy pads fixed-width bytes with NULs and drops trailing NULs when reading them back.
      let end = item.length;
      while (end > 0 && item[end - 1] === 0) end--;
      elements.push(Buffer.from(item.subarray(0, end)));
    } else {
      const view = new DataView(item.buffer, item.byteOffset, item.byteLength);
      let text = '';
      for (let char = 0; char < width; char++) {
        const code = view.getUint32(char * 4, order !== '>');
        if (code === 0) break;
        text += String.fromCodePoint(code);
      }
      elements.push(Buffer.from(text, 'utf8'));
    }
  }
  return elements;
}

/**
 * Reads a NumPy `.npy` file (format versions 1–3): bool, (u)int8–64, float16/32/64 in either byte
 * order, and fixed-width bytes (`S`) or unicode (`U`) as BYTES. Object arrays (pickles) and
 * Fortran order are refused with INVALID_ARGUMENT rather than guessed at.
 */
export function readNpy(file: Uint8Array): NpyArray {
  if (file.length < 10 || !MAGIC.every((byte, index) => file[index] === byte)) {
    throw invalid('not a NumPy file (the magic string \\x93NUMPY is missing)');
  }
  const major = file[6] as number;
  if (major < 1 || major > 3) throw invalid(`format version ${major} is not supported (1, 2 and 3 are)`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const headerStart = major === 1 ? 10 : 12;
  if (file.length < headerStart + headerLength) throw invalid('the file ends inside its header');
  const header = Buffer.from(file.subarray(headerStart, headerStart + headerLength)).toString(
    major === 3 ? 'utf8' : 'latin1',
  );
  const descr = headerField(header, 'descr').slice(1, -1);
  if (headerField(header, 'fortran_order') === 'True') {
    throw invalid('Fortran-ordered arrays are not supported; save with np.ascontiguousarray(a)');
  }
  const shape = parseShape(headerField(header, 'shape'));
  const count = elementCount(shape);
  const payload = file.subarray(headerStart + headerLength);
  const match = /^([<>|=]?)([a-zA-Z])(\d+)$/.exec(descr);
  if (match === null) throw invalid(`dtype '${descr}' is not supported`);
  const [, order = '', kind = '', widthText = ''] = match;
  const width = Number(widthText);
  if (kind === 'S' || kind === 'U') {
    return { datatype: 'BYTES', shape, data: readStrings(payload, count, order, kind, width) };
  }
  const datatype = typeByDescr.get(`${kind}${width}`);
  if (datatype === undefined) throw invalid(`dtype '${descr}' has no Triton datatype`);
  const byteLength = count * width;
  if (payload.length < byteLength) {
    throw invalid(`the data holds ${payload.length} bytes, the shape [${shape}] needs ${byteLength}`);
  }
  let bytes = payload.subarray(0, byteLength);
  if (order === '>' && width > 1) bytes = swapBytes(bytes, width);
  return { datatype, shape, data: typedView(datatype, bytes, count) };
}

function headerBytes(descr: string, shape: readonly number[]): Uint8Array {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  // Version 1.0 header: magic, version, uint16 length, then the dict padded with spaces and a
  // newline so the data starts on a 64-byte boundary (what NumPy writes).
  const unpadded = 10 + dict.length + 1;
  const padding = (64 - (unpadded % 64)) % 64;
  const text = `${dict}${' '.repeat(padding)}\n`;
  if (text.length > 0xffff) throw invalid('the header is too long for format version 1.0');
  const out = new Uint8Array(10 + text.length);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, text.length, true);
  out.set(Buffer.from(text, 'latin1'), 10);
  return out;
}

/**
 * Writes a `.npy` file (format 1.0, little-endian, C order). Fixed-size datatypes take the bytes of
 * `data` as they are (its byte length must match the shape); BYTES elements become a fixed-width
 * `S` array as wide as the longest element. BF16 has no NumPy dtype and is refused.
 */
export function writeNpy(array: NpyArray): Uint8Array {
  const count = elementCount(array.shape);
  if (array.datatype === 'BYTES') {
    if (ArrayBuffer.isView(array.data)) throw invalid('BYTES data must be an array of byte strings');
    const elements = array.data as readonly Uint8Array[];
    if (elements.length !== count) {
      throw invalid(`shape [${array.shape}] has ${count} elements, the data ${elements.length}`);
    }
    const width = Math.max(1, ...elements.map((element) => element.length));
    const header = headerBytes(`|S${width}`, array.shape);
    const out = new Uint8Array(header.length + count * width);
    out.set(header, 0);
    elements.forEach((element, index) => {
      out.set(element, header.length + index * width);
    });
    return out;
  }
  const code = descrByType[array.datatype];
  if (code === undefined) throw invalid(`${array.datatype} has no NumPy dtype`);
  if (!ArrayBuffer.isView(array.data)) throw invalid(`${array.datatype} data must be a typed array`);
  const size = elementSize(array.datatype);
  const bytes = new Uint8Array(array.data.buffer, array.data.byteOffset, array.data.byteLength);
  if (bytes.length !== count * size) {
    throw invalid(
      `shape [${array.shape}] of ${array.datatype} needs ${count * size} bytes, the data has ${bytes.length}`,
    );
  }
  const descr = size === 1 ? `|${code}` : `<${code}`;
  const header = headerBytes(descr, array.shape);
  const out = new Uint8Array(header.length + bytes.length);
  out.set(header, 0);
  out.set(bytes, header.length);
  return out;
}
