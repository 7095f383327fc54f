import { InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { readNpy, writeNpy } from './npy.js';

// Files written by NumPy 1.26 (np.save / np.lib.format.write_array), base64.
const numpy = {
  // np.arange(6, dtype='<f4').reshape(2, 3) / 2
  f4: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAAAPwAAgD8AAMA/AAAAQAAAIEA=',
  // np.array([1, -2, 2**40], dtype='>i8')
  i8be: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPmk4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAAAAf/////////+AAABAAAAAAA=',
  // np.array(['héllo', 'a'], dtype='<U5')
  unicode:
    'k05VTVBZAQB2AHsnZGVzY3InOiAnPFU1JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIApoAAAA6QAAAGwAAABsAAAAbwAAAGEAAAAAAAAAAAAAAAAAAAAAAAAA',
  // np.array([b'ab', b'c'], dtype='S2')
  bytes:
    'k05VTVBZAQB2AHsnZGVzY3InOiAnfFMyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAphYmMA',
  // np.array([[True, False], [False, True]])
  bool: 'k05VTVBZAQB2AHsnZGVzY3InOiAnfGIxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoBAAAB',
  // np.array([1.0, -2.5], dtype='<f2')
  f2: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGYyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAPADB',
  // np.array([7, 8], dtype='<u2') in format version 2.0
  v2: 'k05VTVBZAgB0AAAAeydkZXNjcic6ICc8dTInLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoMiwpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoHAAgA',
  // np.asfortranarray(np.arange(4, dtype='<i4').reshape(2, 2))
  fortran:
    'k05VTVBZAQB2AHsnZGVzY3InOiAnPGk0JywgJ2ZvcnRyYW5fb3JkZXInOiBUcnVlLCAnc2hhcGUnOiAoMiwgMiksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAgAAAAEAAAADAAAA',
};
const file = (name: keyof typeof numpy) => Buffer.from(numpy[name], 'base64');
const strings = (data: unknown) => (data as Buffer[]).map((element) => element.toString('utf8'));

describe('readNpy reads what NumPy writes', () => {
  it('float32 in C order with its shape', () => {
    const array = readNpy(file('f4'));
    expect(array.datatype).toBe('FP32');
    expect(array.shape).toEqual([2, 3]);
    expect(Array.from(array.data as Float32Array)).toEqual([0, 0.5, 1, 1.5, 2, 2.5]);
  });

  it('big-endian int64, swapped to the host order', () => {
    const array = readNpy(file('i8be'));
    expect(array.datatype).toBe('INT64');
    expect(Array.from(array.data as BigInt64Array)).toEqual([1n, -2n, 2n ** 40n]);
  });

  it('unicode (U) and byte (S) strings as BYTES, padding dropped', () => {
    expect(strings(readNpy(file('unicode')).data)).toEqual(['héllo', 'a']);
    const bytes = readNpy(file('bytes'));
    expect(bytes.datatype).toBe('BYTES');
    expect(strings(bytes.data)).toEqual(['ab', 'c']);
  });

  it('bool, float16 bit patterns and a version 2.0 header', () => {
    const bool = readNpy(file('bool'));
    expect(bool).toMatchObject({ datatype: 'BOOL', shape: [2, 2] });
    expect(Array.from(bool.data as Uint8Array)).toEqual([1, 0, 0, 1]);
    const half = readNpy(file('f2'));
    expect(half.datatype).toBe('FP16');
    expect(Array.from(half.data as Uint16Array)).toEqual([0x3c00, 0xc100]);
    expect(Array.from(readNpy(file('v2')).data as Uint16Array)).toEqual([7, 8]);
  });

  it('refuses Fortran order, a missing magic string and a short payload, with INVALID_ARGUMENT', () => {
    expect(() => readNpy(file('fortran'))).toThrow(/Fortran-ordered/);
    expect(() => readNpy(Buffer.from('{"not": "npy"}'))).toThrow(/not a NumPy file/);
    const truncated = file('f4').subarray(0, file('f4').length - 4);
    let thrown: unknown;
    try {
      readNpy(truncated);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InfergateError);
    expect((thrown as InfergateError).code).toBe('INVALID_ARGUMENT');
    expect((thrown as InfergateError).message).toMatch(/holds 20 bytes, the shape \[2,3\] needs 24/);
  });

  it('refuses object arrays rather than unpickling them', () => {
    const header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
    const padded = `${header}${' '.repeat(64 - ((10 + header.length + 1) % 64))}\n`;
    const bytes = Buffer.concat([
      Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, padded.length, 0]),
      Buffer.from(padded, 'latin1'),
      Buffer.alloc(8),
    ]);
    expect(() => readNpy(bytes)).toThrow(/dtype '\|O' is not supported/);
  });
});

describe('writeNpy', () => {
  it('writes the bytes NumPy writes for the same array', () => {
    const data = Float32Array.from([0, 0.5, 1, 1.5, 2, 2.5]);
    expect(Buffer.from(writeNpy({ datatype: 'FP32', shape: [2, 3], data }))).toEqual(file('f4'));
    const bool = writeNpy({ datatype: 'BOOL', shape: [2, 2], data: Uint8Array.from([1, 0, 0, 1]) });
    expect(Buffer.from(bool)).toEqual(file('bool'));
    const bytes = writeNpy({ datatype: 'BYTES', shape: [2], data: [Buffer.from('ab'), Buffer.from('c')] });
    expect(Buffer.from(bytes)).toEqual(file('bytes'));
  });

  it('round-trips every fixed-size datatype NumPy has, and 0-d and empty shapes', () => {
    const cases = [
      { datatype: 'UINT8', data: Uint8Array.from([0, 255]) },
      { datatype: 'INT8', data: Int8Array.from([-128, 127]) },
      { datatype: 'UINT16', data: Uint16Array.from([0, 65535]) },
      { datatype: 'INT16', data: Int16Array.from([-32768, 1]) },
      { datatype: 'UINT32', data: Uint32Array.from([0, 2 ** 32 - 1]) },
      { datatype: 'INT32', data: Int32Array.from([-(2 ** 31), 5]) },
      { datatype: 'UINT64', data: BigUint64Array.from([0n, 2n ** 64n - 1n]) },
      { datatype: 'INT64', data: BigInt64Array.from([-(2n ** 63n), 3n]) },
      { datatype: 'FP16', data: Uint16Array.from([0x3c00, 0x7e00]) },
      { datatype: 'FP64', data: Float64Array.from([Math.PI, -0]) },
    ] as const;
    for (const { datatype, data } of cases) {
      const back = readNpy(writeNpy({ datatype, shape: [2], data }));
      expect(back.datatype).toBe(datatype);
      expect(back.shape).toEqual([2]);
      expect(Buffer.from((back.data as ArrayBufferView).buffer)).toEqual(Buffer.from(data.buffer));
    }
    expect(readNpy(writeNpy({ datatype: 'INT32', shape: [], data: Int32Array.from([9]) }))).toMatchObject({
      shape: [],
      data: Int32Array.from([9]),
    });
    expect(readNpy(writeNpy({ datatype: 'FP32', shape: [0, 3], data: new Float32Array(0) })).shape).toEqual([
      0, 3,
    ]);
  });

  it('starts the data on a 64-byte boundary', () => {
    for (const shape of [[1], [3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 7]]) {
      const count = shape.reduce((a, b) => a * b, 1);
      const bytes = writeNpy({ datatype: 'UINT8', shape, data: new Uint8Array(count) });
      expect((bytes.length - count) % 64).toBe(0);
    }
  });

  it('refuses data that does not fit the shape, BF16 and typed data for BYTES', () => {
    expect(() => writeNpy({ datatype: 'FP32', shape: [3], data: new Float32Array(2) })).toThrow(
      /needs 12 bytes, the data has 8/,
    );
    expect(() => writeNpy({ datatype: 'BF16', shape: [1], data: new Uint16Array(1) })).toThrow(
      /no NumPy dtype/,
    );
    expect(() => writeNpy({ datatype: 'BYTES', shape: [1], data: new Uint8Array(1) })).toThrow(
      /array of byte strings/,
    );
    expect(() => writeNpy({ datatype: 'BYTES', shape: [2], data: [Buffer.from('a')] })).toThrow(/2 elements/);
  });
});
