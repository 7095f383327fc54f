import { decodeBytesElements, type EncodedTensor, ErrorCode, type InferResponse } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { concatInputs, splitOutputs } from './batch-tensors.js';
import { bytesTensor, fp32 } from './testing/echo-transport.js';

function responseOf(...outputs: InferResponse['outputs']): InferResponse {
  return { model: 'm', modelVersion: '1', id: '', outputs, parameters: {} };
}

describe('batch tensors', () => {
  it('concatenates fixed-size and BYTES inputs along the batch dimension', () => {
    const [a, b] = [fp32('X', 1, 2, 1), fp32('X', 2, 2, 2)];
    const [s, t] = [bytesTensor('S', ['a']), bytesTensor('S', ['bc', ''])];
    const batch = concatInputs(
      [
        [a, s],
        [b, t],
      ],
      3,
    );
    expect(batch[0]?.shape).toEqual([3, 2]);
    expect(Array.from(new Float32Array((batch[0] as EncodedTensor).raw.slice().buffer))).toEqual([
      1000, 1001, 2000, 2001, 2002, 2003,
    ]);
    expect(batch[1]?.shape).toEqual([3, 1]);
    expect(decodeBytesElements(batch[1]?.raw as Uint8Array, 3).map(String)).toEqual(['a', 'bc', '']);
  });

  it('splits outputs by row ranges as views of the response bytes', () => {
    const whole = fp32('Y', 3, 2, 7);
    const [first, second] = splitOutputs(responseOf(whole), [1, 2], 'm');
    expect(first?.[0]?.shape).toEqual([1, 2]);
    expect(second?.[0]?.shape).toEqual([2, 2]);
    expect(first?.[0]?.raw.buffer).toBe(whole.raw.buffer);
    expect(second?.[0]?.raw.byteOffset).toBe(whole.raw.byteOffset + 8);
  });

  it("gives each member every output, in the response's order", () => {
    const parts = splitOutputs(responseOf(fp32('Y', 3, 2, 7), fp32('Z', 3, 1, 9)), [2, 1], 'm');
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part.map((output) => output.name)).toEqual(['Y', 'Z']);
    expect(parts[0]?.map((output) => output.shape)).toEqual([
      [2, 2],
      [2, 1],
    ]);
    expect(parts[1]?.map((output) => output.shape)).toEqual([
      [1, 2],
      [1, 1],
    ]);
  });

  it('splits BYTES outputs by walking the length prefixes', () => {
    const whole = { ...bytesTensor('S', ['x', 'yy', 'zzz', '']), shape: [2, 2] };
    const parts = splitOutputs(responseOf(whole), [1, 1], 'm');
    expect(decodeBytesElements(parts[0]?.[0]?.raw as Uint8Array, 2).map(String)).toEqual(['x', 'yy']);
    expect(decodeBytesElements(parts[1]?.[0]?.raw as Uint8Array, 2).map(String)).toEqual(['zzz', '']);
  });

  it('fails with INTERNAL when an output does not carry the batch rows first', () => {
    expect(() => splitOutputs(responseOf(fp32('Y', 1, 6, 0)), [1, 2], 'm')).toThrow(
      expect.objectContaining({ code: ErrorCode.Internal }),
    );
  });

  it('fails with DATA_LOSS when BYTES rows do not add up', () => {
    const broken = { ...bytesTensor('S', ['x', 'y']), shape: [2, 2] };
    expect(() => splitOutputs(responseOf(broken), [1, 1], 'm')).toThrow(
      expect.objectContaining({ code: ErrorCode.DataLoss }),
    );
  });
});
