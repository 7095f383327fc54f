import { describe, expect, it } from 'vitest';
import { decodeBytesElements, decodeTensorData, encodeBytesElements, encodeTensor } from './codec.js';
import { DATATYPES, type DataType } from './datatype.js';
import { InfergateError } from './errors.js';
import { bf16BitsToFloat, halfBitsToFloat } from './internal/half.js';
import type { InputTensor } from './tensor.js';

function roundTrip(input: InputTensor) {
  const encoded = encodeTensor(input);
  return { encoded, decoded: decodeTensorData(encoded) };
}

function expectInvalid(fn: () => unknown, pattern: RegExp) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe('INVALID_ARGUMENT');
    expect((error as InfergateError).message).toMatch(pattern);
    return;
  }
  throw new Error('expected an INVALID_ARGUMENT error');
}

describe('encodeTensor', () => {
  const samples: Record<Exclude<DataType, 'BYTES'>, readonly (number | bigint | boolean)[]> = {
    BOOL: [true, false, true],
    UINT8: [0, 7, 255],
    UINT16: [0, 1000, 65535],
    UINT32: [0, 1, 4294967295],
    UINT64: [0n, 1n, 18446744073709551615n],
    INT8: [-128, 0, 127],
    INT16: [-32768, 1, 32767],
    INT32: [-2147483648, 5, 2147483647],
    INT64: [-9223372036854775808n, 5n, 9223372036854775807n],
    FP16: [1.5, -2, 65504],
    BF16: [1.5, -2, 256],
    FP32: [1.5, -2.25, 2 ** 100],
    FP64: [Math.PI, -1e300, 0],
  };

  for (const [datatype, values] of Object.entries(samples)) {
    it(`round-trips ${datatype} from a plain array`, () => {
      const { encoded, decoded } = roundTrip({
        name: 'x',
        datatype: datatype as DataType,
        data: values as number[],
      });
      expect(encoded.shape).toEqual([3]);
      const expected = datatype === 'BOOL' ? [1, 0, 1] : values;
      expect(Array.from(decoded as ArrayLike<number | bigint>)).toEqual(expected);
    });
  }

  it('covers every datatype in DATATYPES', () => {
    expect(new Set([...Object.keys(samples), 'BYTES'])).toEqual(new Set(DATATYPES));
  });

  it('uses the natural typed array without copying', () => {
    const data = new Float32Array([1, 2, 3, 4]);
    const encoded = encodeTensor({ name: 'x', datatype: 'FP32', shape: [2, 2], data });
    expect(encoded.raw.buffer).toBe(data.buffer);
    expect(encoded.raw.byteLength).toBe(16);
  });

  it('accepts a Uint8ClampedArray (canvas ImageData) for UINT8, without copying', () => {
    const data = new Uint8ClampedArray([0, 128, 255, 7]);
    const encoded = encodeTensor({ name: 'pixels', datatype: 'UINT8', shape: [2, 2], data });
    expect(encoded.raw.buffer).toBe(data.buffer);
    expect(Array.from(decodeTensorData(encoded) as Uint8Array)).toEqual([0, 128, 255, 7]);
    expect(encodeTensor({ name: 'p', datatype: 'UINT8', data }).shape).toEqual([4]);
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'INT8', data: new Uint8ClampedArray(2) }),
      /INT8 needs Int8Array, got a Uint8ClampedArray/,
    );
  });

  it('accepts raw little-endian bytes for fixed-size datatypes', () => {
    const raw = Buffer.from(new Int32Array([7, -1]).buffer);
    const encoded = encodeTensor({ name: 'x', datatype: 'INT32', data: raw });
    expect(encoded.shape).toEqual([2]);
    expect(Array.from(decodeTensorData(encoded) as Int32Array)).toEqual([7, -1]);
  });

  it('encodes FP16 and BF16 from Float32Array and passes Uint16Array bit patterns through', () => {
    const half = encodeTensor({ name: 'h', datatype: 'FP16', data: new Float32Array([1, 0.5]) });
    expect(Array.from(new Uint16Array(half.raw.buffer, half.raw.byteOffset, 2))).toEqual([0x3c00, 0x3800]);
    const bf = encodeTensor({ name: 'b', datatype: 'BF16', data: new Float32Array([1, -2]) });
    expect(Array.from(new Uint16Array(bf.raw.buffer, bf.raw.byteOffset, 2))).toEqual([0x3f80, 0xc000]);
    const bits = new Uint16Array([0x3c00]);
    expect(encodeTensor({ name: 'h', datatype: 'FP16', data: bits }).raw.buffer).toBe(bits.buffer);
  });

  it('encodes 0-d and empty tensors', () => {
    const scalar = roundTrip({ name: 's', datatype: 'INT32', shape: [], data: [42] });
    expect(scalar.encoded.shape).toEqual([]);
    expect(Array.from(scalar.decoded as Int32Array)).toEqual([42]);
    const empty = roundTrip({ name: 'e', datatype: 'FP32', shape: [0, 3], data: [] });
    expect(empty.encoded.raw.byteLength).toBe(0);
    expect((empty.decoded as Float32Array).length).toBe(0);
  });

  it('encodes BYTES with 4-byte little-endian length prefixes, including empty, unicode and binary elements', () => {
    const binary = new Uint8Array([0, 255, 10, 0]);
    const { encoded, decoded } = roundTrip({ name: 'b', datatype: 'BYTES', data: ['', 'héllo ✓', binary] });
    const raw = Buffer.from(encoded.raw);
    expect(raw.readUInt32LE(0)).toBe(0);
    expect(raw.readUInt32LE(4)).toBe(Buffer.byteLength('héllo ✓'));
    const elements = decoded as Buffer[];
    expect(elements.map((element) => element.length)).toEqual([0, Buffer.byteLength('héllo ✓'), 4]);
    expect(elements[1]?.toString('utf8')).toBe('héllo ✓');
    expect(Array.from(elements[2] as Buffer)).toEqual([0, 255, 10, 0]);
  });

  it('rejects a shape that does not match the data', () => {
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3] }),
      /3 elements given, shape needs 4/,
    );
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'FP32', shape: [3], data: new Uint8Array(8) }),
      /8 raw bytes given, but 3 FP32 elements need 12/,
    );
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'FP32', shape: [-1], data: [] }),
      /non-negative integers/,
    );
  });

  it('rejects the wrong typed array for a datatype', () => {
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'INT32', data: new Float32Array(2) }),
      /INT32 needs Int32Array, got a Float32Array/,
    );
  });

  it('rejects values out of range or of the wrong kind', () => {
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'UINT8', data: [256] }),
      /not an integer in UINT8's range/,
    );
    expectInvalid(() => encodeTensor({ name: 'x', datatype: 'INT32', data: [1.5] }), /not an integer/);
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'INT64', data: [2 ** 60] }),
      /bigints or safe integers/,
    );
    expectInvalid(() => encodeTensor({ name: 'x', datatype: 'UINT64', data: [-1n] }), /out of range/);
    expectInvalid(() => encodeTensor({ name: 'x', datatype: 'BOOL', data: [2] }), /use true\/false/);
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'FP32', data: ['1'] as unknown as number[] }),
      /needs numbers/,
    );
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'BYTES', data: [1] as unknown as string[] }),
      /strings or Uint8Arrays/,
    );
  });

  it('rejects unknown datatypes and missing names or data', () => {
    expectInvalid(
      () => encodeTensor({ name: 'x', datatype: 'FLOAT' as DataType, data: [1] }),
      /unknown datatype "FLOAT"/,
    );
    expectInvalid(() => encodeTensor({ name: '', datatype: 'FP32', data: [1] }), /name/);
    expectInvalid(() => encodeTensor({ name: 'x', datatype: 'FP32' } as unknown as InputTensor), /data/);
  });
});

describe('decodeTensorData', () => {
  it('returns a view into the received bytes when aligned, and a copy when not', () => {
    const backing = new Uint8Array(1 + 8);
    new DataView(backing.buffer).setFloat32(1, 1.5, true);
    new DataView(backing.buffer).setFloat32(5, -3, true);
    const unaligned = decodeTensorData({ name: 'o', datatype: 'FP32', shape: [2], raw: backing.subarray(1) });
    expect(Array.from(unaligned as Float32Array)).toEqual([1.5, -3]);
    const aligned = new Uint8Array(new Float32Array([2, 4]).buffer);
    const view = decodeTensorData({ name: 'o', datatype: 'FP32', shape: [2], raw: aligned }) as Float32Array;
    expect(view.buffer).toBe(aligned.buffer);
  });

  it('reports a byte length that disagrees with the shape as DATA_LOSS', () => {
    expect(() =>
      decodeTensorData({ name: 'o', datatype: 'FP32', shape: [3], raw: new Uint8Array(8) }),
    ).toThrow(expect.objectContaining({ code: 'DATA_LOSS' }));
  });

  it('reports truncated BYTES as DATA_LOSS', () => {
    const raw = encodeBytesElements(['abc']).subarray(0, 5);
    expect(() => decodeBytesElements(raw)).toThrow(expect.objectContaining({ code: 'DATA_LOSS' }));
    expect(() => decodeBytesElements(encodeBytesElements(['a', 'b']), 3)).toThrow(
      /holds 2 elements, shape says 3/,
    );
  });
});

describe('FP16 and BF16 decode of large tensors', () => {
  it('widens every one of the 65,536 bit patterns exactly as the per-element conversion does', () => {
    const patterns = new Uint16Array(0x10000).map((_, i) => i);
    const raw = new Uint8Array(patterns.buffer);
    const half = decodeTensorData({ name: 'h', datatype: 'FP16', shape: [0x10000], raw }) as Float32Array;
    const bf16 = decodeTensorData({ name: 'b', datatype: 'BF16', shape: [0x10000], raw }) as Float32Array;
    const same = (a: number | undefined, b: number) =>
      Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
    const wrong: string[] = [];
    for (let i = 0; i < 0x10000; i++) {
      if (!same(half[i], Math.fround(halfBitsToFloat(i)))) wrong.push(`FP16 ${i}`);
      if (!same(bf16[i], bf16BitsToFloat(i))) wrong.push(`BF16 ${i}`);
    }
    expect(wrong).toEqual([]);
  });
});
