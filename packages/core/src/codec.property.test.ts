import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeTensorData, encodeTensor } from './codec.js';
import { DATATYPES, type DataType } from './datatype.js';
import { InfergateError } from './errors.js';
import { ModelInferResponseSchema } from './gen/grpc_service_pb.js';
import { fromModelInferResponse, parseModelInferResponse } from './internal/infer-wire.js';
import type { InputTensor } from './tensor.js';

const shapeArbitrary = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 });
const count = (shape: readonly number[]) => shape.reduce((product, dim) => product * dim, 1);

/** Values of `datatype` that survive the wire exactly, and how they read back. */
function valuesOf(datatype: DataType, length: number): fc.Arbitrary<readonly unknown[]> {
  const sized = <T>(arbitrary: fc.Arbitrary<T>) =>
    fc.array(arbitrary, { minLength: length, maxLength: length });
  switch (datatype) {
    case 'BOOL':
      return sized(fc.boolean());
    case 'UINT8':
      return sized(fc.integer({ min: 0, max: 0xff }));
    case 'UINT16':
      return sized(fc.integer({ min: 0, max: 0xffff }));
    case 'UINT32':
      return sized(fc.integer({ min: 0, max: 0xffffffff }));
    case 'INT8':
      return sized(fc.integer({ min: -0x80, max: 0x7f }));
    case 'INT16':
      return sized(fc.integer({ min: -0x8000, max: 0x7fff }));
    case 'INT32':
      return sized(fc.integer({ min: -0x80000000, max: 0x7fffffff }));
    case 'INT64':
      return sized(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
    case 'UINT64':
      return sized(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
    // Integers up to 2048 (FP16) and 256 (BF16) are exact in those formats.
    case 'FP16':
      return sized(fc.integer({ min: -2048, max: 2048 }));
    case 'BF16':
      return sized(fc.integer({ min: -256, max: 256 }));
    case 'FP32':
      return sized(fc.float());
    case 'FP64':
      return sized(fc.double());
    case 'BYTES':
      return sized(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.uint8Array({ maxLength: 8 })));
  }
}

const tensorArbitrary = fc
  .tuple(fc.constantFrom(...DATATYPES), shapeArbitrary)
  .chain(([datatype, shape]) =>
    valuesOf(datatype, count(shape)).map((values) => ({ datatype, shape, values })),
  );

function readBack(datatype: DataType, data: unknown): unknown[] {
  if (datatype === 'BOOL') return Array.from(data as Uint8Array, (value) => value === 1);
  if (datatype === 'BYTES') return (data as Buffer[]).map((element) => Uint8Array.from(element));
  return Array.from(data as ArrayLike<unknown>);
}

function expected(datatype: DataType, values: readonly unknown[]): unknown[] {
  if (datatype === 'FP32') return Array.from(Float32Array.from(values as number[]));
  if (datatype === 'BYTES') {
    return values.map((value) =>
      typeof value === 'string'
        ? Uint8Array.from(Buffer.from(value, 'utf8'))
        : Uint8Array.from(value as Uint8Array),
    );
  }
  return [...values];
}

describe('codec (property)', () => {
  it('encode → decode gives back every value, for random datatypes, shapes and values', () => {
    fc.assert(
      fc.property(tensorArbitrary, ({ datatype, shape, values }) => {
        const input = { name: 'x', datatype, shape, data: values } as InputTensor;
        const encoded = encodeTensor(input);
        expect(encoded.shape).toEqual(shape);
        expect(readBack(datatype, decodeTensorData(encoded))).toEqual(expected(datatype, values));
      }),
      { numRuns: 400 },
    );
  });

  it('decoding random bytes as a ModelInferResponse throws nothing but InfergateError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => {
        try {
          const response = fromModelInferResponse(parseModelInferResponse(bytes));
          for (const output of response.outputs) decodeTensorData(output);
        } catch (error) {
          expect(error).toBeInstanceOf(InfergateError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('a well-formed message with random outputs (datatypes, dims, raw bytes) throws nothing but InfergateError', () => {
    const outputArbitrary = fc.record({
      name: fc.string({ maxLength: 4 }),
      datatype: fc.oneof(fc.constantFrom(...DATATYPES), fc.string({ maxLength: 5 })),
      shape: fc.array(
        fc.oneof(
          fc.bigInt({ min: -3n, max: 6n }),
          fc.constantFrom(2n ** 40n, 10n ** 12n, -(2n ** 63n), 2n ** 63n - 1n),
        ),
        { maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(outputArbitrary, { maxLength: 3 }),
        fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 4 }),
        (outputs, raws) => {
          const message = create(ModelInferResponseSchema, {
            modelName: 'm',
            outputs,
            rawOutputContents: raws,
          });
          const bytes = toBinary(ModelInferResponseSchema, message);
          try {
            const response = fromModelInferResponse(parseModelInferResponse(bytes));
            for (const output of response.outputs) decodeTensorData(output);
          } catch (error) {
            expect(error).toBeInstanceOf(InfergateError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
