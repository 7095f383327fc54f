import { create, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { SEND_AS_IS_BYTES, serializeInferResponse, serializeInferResponseChunks } from './infer-response.js';
import { ModelInferResponseSchema } from './internal/proto.js';

type Init = Parameters<typeof create<typeof ModelInferResponseSchema>>[1];

const cases: Record<string, Init> = {
  'one output, [64, 16]': {
    modelName: 'identity',
    modelVersion: '1',
    id: 'req-7',
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [64n, 16n] }],
    rawOutputContents: [new Uint8Array(64 * 16 * 4).fill(3)],
  },
  'empty strings, a scalar output and a zero dim': {
    modelName: 'm',
    outputs: [
      { name: 'A', datatype: 'INT64', shape: [] },
      { name: '', datatype: 'BYTES', shape: [0n] },
    ],
    rawOutputContents: [new Uint8Array(8), new Uint8Array(0)],
  },
  'multi-byte varints and UTF-8 names': {
    modelName: 'modèle_é',
    modelVersion: '12',
    id: 'x'.repeat(200),
    outputs: [{ name: 'sortie_ü', datatype: 'UINT8', shape: [1n, 300n, 70_000n, 2n ** 40n] }],
    rawOutputContents: [new Uint8Array(300)],
  },
  'response and output parameters (the protobuf encoder)': {
    modelName: 'p',
    parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } },
    outputs: [
      {
        name: 'O',
        datatype: 'FP32',
        shape: [2n],
        parameters: { classification: { parameterChoice: { case: 'int64Param', value: 1n } } },
      },
    ],
    rawOutputContents: [new Uint8Array(8)],
  },
  'typed contents (the protobuf encoder)': {
    modelName: 'c',
    outputs: [{ name: 'O', datatype: 'INT32', shape: [2n], contents: { intContents: [1, 2] } }],
  },
};

describe('serializeInferResponse', () => {
  for (const [name, init] of Object.entries(cases)) {
    it(`writes what the protobuf runtime writes: ${name}`, () => {
      const response = create(ModelInferResponseSchema, init);
      const expected = Buffer.from(toBinary(ModelInferResponseSchema, response));
      expect(serializeInferResponse(response).equals(expected)).toBe(true);
      const framed = serializeInferResponse(response, 5);
      expect(framed.subarray(5).equals(expected)).toBe(true);
    });
  }
});

describe('serializeInferResponseChunks', () => {
  it("sends a large output from its own memory, a small one copied in, in the encoder's order", () => {
    const large = new Uint8Array(SEND_AS_IS_BYTES + 3).fill(7);
    const small = new Uint8Array(40).fill(9);
    const response = create(ModelInferResponseSchema, {
      modelName: 'identity',
      outputs: [
        { name: 'A', datatype: 'UINT8', shape: [BigInt(large.byteLength)] },
        { name: 'B', datatype: 'UINT8', shape: [40n] },
        { name: 'C', datatype: 'UINT8', shape: [BigInt(large.byteLength)] },
      ],
      rawOutputContents: [large, small, large],
    });
    const chunks = serializeInferResponseChunks(response, 5);
    const expected = Buffer.from(toBinary(ModelInferResponseSchema, response));
    expect(Buffer.concat(chunks).subarray(5).equals(expected)).toBe(true);
    // head+tag | A | tag B small tag | C: the large outputs are the model's memory, not copies.
    expect(chunks).toHaveLength(4);
    for (const index of [1, 3]) {
      expect(chunks[index]?.buffer).toBe(large.buffer);
      expect(chunks[index]?.byteOffset).toBe(large.byteOffset);
    }
    expect(serializeInferResponseChunks(create(ModelInferResponseSchema, { modelName: 'm' }))).toHaveLength(
      1,
    );
  });
});
