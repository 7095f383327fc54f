import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InfergateError } from '../errors.js';
import { type Parameters, type ParameterValue, param } from '../parameters.js';
import type { InferRequest } from '../transport.js';
import { encodeInferRequest, INLINE_RAW_LIMIT, joinChunks } from './infer-request-writer.js';
import { serializeInferRequest, toModelInferRequest } from './infer-wire.js';

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 6 }));
const parameterValue: fc.Arbitrary<ParameterValue> = fc.oneof(
  fc.boolean(),
  text,
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
  fc.double({ noNaN: true }).map(param.double),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(param.int64),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(param.uint64),
);
const parameters = fc.option(fc.dictionary(text, parameterValue, { maxKeys: 3 }), { nil: undefined });
const shape = fc.array(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constant(2 ** 40)), { maxLength: 4 });

const request: fc.Arbitrary<{ request: InferRequest; raws: Uint8Array[] }> = fc
  .record(
    {
      model: text,
      modelVersion: text,
      id: text,
      parameters: fc.dictionary(text, parameterValue, { maxKeys: 3 }),
      inputs: fc.array(
        fc.record({
          name: text,
          datatype: fc.constantFrom('FP32', 'INT64', 'BYTES', 'FP16'),
          shape,
          parameters: fc.dictionary(text, parameterValue, { maxKeys: 2 }),
          size: fc.oneof(
            { weight: 9, arbitrary: fc.integer({ min: 0, max: 40 }) },
            { weight: 1, arbitrary: fc.constant(INLINE_RAW_LIMIT + 3) },
          ),
        }),
        { maxLength: 3 },
      ),
      outputs: fc.array(
        fc.record(
          {
            name: text,
            classCount: fc.integer({ min: 0, max: 10 }),
            parameters: fc.dictionary(text, parameterValue, { maxKeys: 2 }),
          },
          { requiredKeys: ['name'] },
        ),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ['model', 'inputs'] },
  )
  .map(({ inputs, outputs, ...rest }) => {
    const raws = inputs.map(({ size }, index) => new Uint8Array(size).fill(index + 1));
    const built: InferRequest = {
      ...rest,
      inputs: inputs.map(({ size: _size, ...input }, index) => ({
        ...input,
        raw: raws[index] as Uint8Array,
      })),
      ...(outputs !== undefined ? { outputs } : {}),
    };
    return { request: built, raws };
  });

describe('encodeInferRequest', () => {
  it('writes exactly the bytes of the protobuf runtime plus the appended raw contents', () => {
    fc.assert(
      fc.property(
        request,
        parameters,
        fc.integer({ min: 0, max: 8 }),
        ({ request: built, raws }, extra, reserve) => {
          const expected = serializeInferRequest(toModelInferRequest(built, extra), raws);
          const encoded = encodeInferRequest(built, raws, extra, reserve);
          const joined = joinChunks(encoded);
          expect(encoded.byteLength).toBe(expected.byteLength);
          expect(Buffer.from(joined.subarray(reserve)).equals(expected)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('carries a parameter named __proto__ on both paths (a plain assignment would drop it)', () => {
    const extra = JSON.parse('{"__proto__": "kept", "after": 1}') as Parameters;
    const built: InferRequest = { model: 'm', inputs: [] };
    const message = toModelInferRequest(built, extra);
    expect(Object.keys(message.parameters)).toEqual(['__proto__', 'after']);
    const expected = serializeInferRequest(message, []);
    expect(Buffer.from(joinChunks(encodeInferRequest(built, [], extra))).equals(expected)).toBe(true);
  });

  it('hands large tensors over as their own chunks, without copying them', () => {
    const big = new Uint8Array(INLINE_RAW_LIMIT * 2);
    const small = new Uint8Array(16);
    const built: InferRequest = {
      model: 'identity',
      inputs: [
        { name: 'A', datatype: 'UINT8', shape: [big.byteLength], raw: big },
        { name: 'B', datatype: 'UINT8', shape: [16], raw: small },
      ],
    };
    const encoded = encodeInferRequest(built, [big, small], undefined, 5);
    expect(encoded.chunks).toHaveLength(3);
    expect(encoded.chunks[1]).toBe(big);
    expect(encoded.chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)).toBe(encoded.byteLength + 5);
  });

  it('refuses a shape that is not non-negative integers, typed', () => {
    const built: InferRequest = {
      model: 'm',
      inputs: [{ name: 'A', datatype: 'FP32', shape: [-1], raw: new Uint8Array(0) }],
    };
    expect(() => encodeInferRequest(built, [new Uint8Array(0)])).toThrow(InfergateError);
    expect(() => encodeInferRequest(built, [new Uint8Array(0)])).toThrow(/non-negative integers/);
  });

  it('refuses a parameter out of 64-bit range, typed', () => {
    const built: InferRequest = { model: 'm', inputs: [], parameters: { big: 2n ** 64n } };
    expect(() => encodeInferRequest(built, [])).toThrow(/parameter 'big'/);
  });
});
