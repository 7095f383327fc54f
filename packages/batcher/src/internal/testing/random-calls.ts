// Test support (not exported): fast-check arbitraries for batches of calls of mixed layouts.
import { type DataType, type EncodedTensor, encodeBytesElements, type InferRequest } from '@infergate/core';
import fc from 'fast-check';

const SIZES: Partial<Record<DataType, number>> = { FP32: 4, FP16: 2, INT64: 8, BOOL: 1, UINT8: 1, INT16: 2 };
const DATATYPES: DataType[] = ['FP32', 'FP16', 'INT64', 'BOOL', 'UINT8', 'INT16', 'BYTES'];

export interface InputLayout {
  datatype: DataType;
  /** Non-batch dims. */
  dims: number[];
}

export const layoutArbitrary: fc.Arbitrary<InputLayout> = fc.record({
  datatype: fc.constantFrom(...DATATYPES),
  dims: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
});

function elements(layout: InputLayout, rows: number): number {
  return layout.dims.reduce((product, dim) => product * dim, rows);
}

/** One input tensor with random content for `rows` rows. */
export function tensorArbitrary(
  name: string,
  layout: InputLayout,
  rows: number,
): fc.Arbitrary<EncodedTensor> {
  const count = elements(layout, rows);
  const shape = [rows, ...layout.dims];
  if (layout.datatype === 'BYTES') {
    return fc.array(fc.string({ maxLength: 6 }), { minLength: count, maxLength: count }).map((strings) => ({
      name,
      datatype: 'BYTES',
      shape,
      raw: encodeBytesElements(strings),
    }));
  }
  const size = (SIZES[layout.datatype] as number) * count;
  const bytes =
    layout.datatype === 'BOOL'
      ? fc.uint8Array({ min: 0, max: 1, minLength: size, maxLength: size })
      : fc.uint8Array({ minLength: size, maxLength: size });
  return bytes.map((raw) => ({ name, datatype: layout.datatype, shape, raw }));
}

/** Calls for `model` over a few shared layouts (so that some of them batch together). */
export function callsArbitrary(
  model: string,
  options: { inputNames: readonly string[]; maxCalls: number; maxRows: number },
): fc.Arbitrary<{ request: InferRequest; tenant: string }[]> {
  const layoutSet = fc.array(
    fc.array(layoutArbitrary, { minLength: 1, maxLength: options.inputNames.length }),
    {
      minLength: 1,
      maxLength: 3,
    },
  );
  return layoutSet.chain((layouts) =>
    fc.array(
      fc
        .record({
          layout: fc.constantFrom(...layouts),
          rows: fc.integer({ min: 1, max: options.maxRows }),
          tenant: fc.constantFrom('a', 'b', 'c'),
        })
        .chain(({ layout, rows, tenant }) =>
          fc
            .tuple(
              ...layout.map((input, index) =>
                tensorArbitrary(options.inputNames[index] as string, input, rows),
              ),
            )
            .map((inputs) => ({ request: { model, inputs }, tenant })),
        ),
      { minLength: 1, maxLength: options.maxCalls },
    ),
  );
}

/** True when the output is byte for byte the input, with the same shape and datatype. */
export function sameTensor(output: EncodedTensor | undefined, input: EncodedTensor): boolean {
  if (output === undefined) return false;
  if (output.datatype !== input.datatype || output.shape.join() !== input.shape.join()) return false;
  return Buffer.from(output.raw.buffer, output.raw.byteOffset, output.raw.byteLength).equals(
    Buffer.from(input.raw.buffer, input.raw.byteOffset, input.raw.byteLength),
  );
}
