import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferResponseSchema } from '../gen/grpc_service_pb.js';
import { readModelInferResponse } from './infer-response-reader.js';
import { parseModelInferResponse } from './infer-wire.js';

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', 'OUTPUT0', 'FP32', 'naïve', '模型'));
const dim = fc.oneof(
  fc.bigInt({ min: 0n, max: 1024n }),
  fc.bigInt({ min: 0n, max: 2n ** 49n }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);
const message = fc.record({
  modelName: text,
  modelVersion: text,
  id: text,
  withParameters: fc.boolean(),
  outputs: fc.array(
    fc.record({
      name: text,
      datatype: text,
      shape: fc.array(dim, { maxLength: 4 }),
      withParameters: fc.boolean(),
      withContents: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  raws: fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 3 }),
});

type Generated = typeof message extends fc.Arbitrary<infer T> ? T : never;

function encode(value: Generated): Buffer {
  return Buffer.from(
    toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, {
        modelName: value.modelName,
        modelVersion: value.modelVersion,
        id: value.id,
        parameters: value.withParameters
          ? { p: { parameterChoice: { case: 'boolParam' as const, value: true } } }
          : {},
        outputs: value.outputs.map((output) => ({
          name: output.name,
          datatype: output.datatype,
          shape: output.shape,
          parameters: output.withParameters
            ? { q: { parameterChoice: { case: 'stringParam' as const, value: 'x' } } }
            : {},
          ...(output.withContents ? { contents: { intContents: [1, 2] } } : {}),
        })),
        rawOutputContents: value.raws,
      }),
    ),
  );
}

const plain = (value: Generated) =>
  !value.withParameters &&
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the whole range the reader takes
  [value.modelName, value.modelVersion, value.id].every((s) => /^[\x00-\x7f]*$/.test(s)) &&
  value.outputs.every(
    (output) =>
      !output.withParameters &&
      !output.withContents &&
      // biome-ignore lint/suspicious/noControlCharactersInRegex: as above
      [output.name, output.datatype].every((s) => /^[\x00-\x7f]*$/.test(s)) &&
      output.shape.every((d) => d >= 0n && d < 2n ** 49n),
  );

describe('readModelInferResponse', () => {
  it('reads what the protobuf runtime reads, and takes every plain response', () => {
    fc.assert(
      fc.property(message, (value) => {
        const bytes = encode(value);
        const fast = readModelInferResponse(bytes);
        const runtime = fromBinary(ModelInferResponseSchema, bytes);
        if (fast !== undefined) {
          expect(fast).toEqual(runtime);
          fast.rawOutputContents.forEach((raw, index) => {
            // Views of the message, as the runtime gives them (no copy).
            expect(raw.buffer).toBe(bytes.buffer);
            expect(Buffer.isBuffer(raw)).toBe(Buffer.isBuffer(runtime.rawOutputContents[index]));
          });
        }
        // Parameters, contents, non-ASCII text and huge or negative dimensions go to the runtime.
        expect(fast !== undefined).toBe(plain(value));
        expect(parseModelInferResponse(bytes)).toEqual(runtime);
      }),
      { numRuns: 400 },
    );
  });

  it('gives up on bytes it cannot read, leaving the error to the runtime', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 60 }), (bytes) => {
        const fast = readModelInferResponse(bytes);
        if (fast === undefined) return;
        // Whatever it accepts, the runtime accepts and reads the same.
        expect(fast).toEqual(fromBinary(ModelInferResponseSchema, bytes));
      }),
      { numRuns: 2000 },
    );
    // A length past the end, a truncated key, a wire type the message does not use.
    expect(readModelInferResponse(Uint8Array.of(0x0a, 0x05, 0x61))).toBeUndefined();
    expect(readModelInferResponse(Uint8Array.of(0x80))).toBeUndefined();
    expect(readModelInferResponse(Uint8Array.of(0x08, 0x01))).toBeUndefined();
    expect(() => parseModelInferResponse(Uint8Array.of(0x0a, 0x05, 0x61))).toThrow(
      /not a ModelInferResponse/,
    );
  });

  it('reads names that share a length and first and last bytes (one cache slot) each as written', () => {
    // Names of one byte length with the same ends land in one slot of the recent-names cache
    // ('OU\u00e9A_0' is 7 bytes in UTF-8 too); reading them in turn, again and again, must never
    // give one for the other, and the non-ASCII one still goes to the runtime.
    const names = ['OUT_A_0', 'OUT_B_0', 'OUT_A_0', 'OU\u00e9A_0', 'OUT_B_0'];
    for (let round = 0; round < 3; round++) {
      for (const name of names) {
        const bytes = encode({
          modelName: name,
          modelVersion: '1',
          id: name,
          withParameters: false,
          outputs: [{ name, datatype: 'FP32', shape: [1n], withParameters: false, withContents: false }],
          raws: [],
        });
        const fast = readModelInferResponse(bytes);
        expect(fast).toEqual(
          name.includes('\u00e9') ? undefined : fromBinary(ModelInferResponseSchema, bytes),
        );
      }
    }
  });

  it('reads unpacked dimensions as the runtime does', () => {
    // outputs { name: "o" shape: 2 shape: 3 } written unpacked (field 3, wire type 0).
    const output = [0x0a, 0x01, 0x6f, 0x18, 0x02, 0x18, 0x03];
    const bytes = Uint8Array.of(0x2a, output.length, ...output);
    const fast = readModelInferResponse(bytes);
    expect(fast?.outputs[0]?.shape).toEqual([2n, 3n]);
    expect(fast).toEqual(fromBinary(ModelInferResponseSchema, bytes));
  });
});
