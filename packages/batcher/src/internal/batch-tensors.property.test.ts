import { type EncodedTensor, InfergateError } from '@infergate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatInputs, splitOutputs } from './batch-tensors.js';
import { layoutArbitrary, tensorArbitrary } from './testing/random-calls.js';

/** Several members with the same input layouts and their own row counts. */
const membersArbitrary = fc
  .tuple(
    fc.array(layoutArbitrary, { minLength: 1, maxLength: 3 }),
    fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 6 }),
  )
  .chain(([layouts, rows]) =>
    fc
      .tuple(
        ...rows.map((memberRows) =>
          fc.tuple(...layouts.map((layout, index) => tensorArbitrary(`IN${index}`, layout, memberRows))),
        ),
      )
      .map((members) => ({ members: members as EncodedTensor[][], rows })),
  );

const bytesOf = (tensor: EncodedTensor) =>
  Buffer.from(tensor.raw.buffer, tensor.raw.byteOffset, tensor.raw.byteLength);

describe('batch merge and split (property)', () => {
  it('split(merge(members)) gives every member back exactly its own rows, for every datatype', () => {
    fc.assert(
      fc.property(membersArbitrary, ({ members, rows }) => {
        const total = rows.reduce((sum, memberRows) => sum + memberRows, 0);
        const merged = concatInputs(members, total);
        // An echo model: the outputs are the merged inputs.
        const parts = splitOutputs(
          { model: 'm', modelVersion: '1', id: '', outputs: merged, parameters: {} },
          rows,
          'm',
        );
        expect(parts).toHaveLength(members.length);
        parts.forEach((outputs, member) => {
          const inputs = members[member] as EncodedTensor[];
          expect(outputs).toHaveLength(inputs.length);
          outputs.forEach((output, index) => {
            const input = inputs[index] as EncodedTensor;
            expect(output.shape).toEqual(input.shape);
            expect(output.datatype).toBe(input.datatype);
            expect(bytesOf(output).equals(bytesOf(input))).toBe(true);
          });
        });
      }),
      { numRuns: 300 },
    );
  });

  it('splitting random bytes throws nothing but InfergateError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('FP32' as const, 'INT64' as const, 'BOOL' as const, 'BYTES' as const),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
        fc.uint8Array({ maxLength: 64 }),
        (datatype, rows, dims, raw) => {
          const total = rows.reduce((sum, memberRows) => sum + memberRows, 0);
          const output: EncodedTensor = { name: 'OUT', datatype, shape: [total, ...dims], raw };
          try {
            splitOutputs(
              { model: 'm', modelVersion: '1', id: '', outputs: [output], parameters: {} },
              rows,
              'm',
            );
          } catch (error) {
            expect(error).toBeInstanceOf(InfergateError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
