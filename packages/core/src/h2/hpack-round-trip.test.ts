// HpackEncoder → HpackDecoder for any field lists and any table sizes the peer sets (property tests).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackEncoder } from './hpack.js';

type Field = readonly [string, string];

function decodeAll(decoder: HpackDecoder, block: Uint8Array): Field[] {
  const fields: Field[] = [];
  decoder.decode(block, (name, value) => fields.push([name, value]));
  return fields;
}

const latin1Text = (maxLength: number) =>
  fc.string({ unit: fc.nat(255).map((code) => String.fromCharCode(code)), maxLength });
const fieldArbitrary = fc.tuple(
  fc.oneof(
    fc.constantFrom(
      ':status',
      ':path',
      ':authority',
      'content-type',
      'grpc-status',
      'x-a',
      'x-b',
      'authorization',
    ),
    latin1Text(12),
  ),
  fc.oneof(fc.constantFrom('', '200', '/', 'application/grpc', '0', 'gzip, deflate'), latin1Text(300)),
);

describe('HpackEncoder → HpackDecoder', () => {
  it('gives back every field list, whatever is indexed and whatever table sizes the peer sets', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6000 }),
        fc.array(
          fc.record({
            fields: fc.array(fieldArbitrary, { maxLength: 12 }),
            indexedNames: fc.func(fc.boolean()),
            newSizes: fc.array(fc.integer({ min: 0, max: 6000 }), { maxLength: 2 }),
          }),
          { maxLength: 12 },
        ),
        (tableSize, blocks) => {
          const encoder = new HpackEncoder(tableSize);
          const decoder = new HpackDecoder(6000);
          for (const { fields, indexedNames, newSizes } of blocks) {
            for (const size of newSizes) encoder.setMaxTableSize(size);
            expect(
              decodeAll(
                decoder,
                encoder.encode(fields, (name) => indexedNames(name)),
              ),
            ).toEqual(fields);
          }
        },
      ),
    );
  });

  it('announces the smallest and then the last size the peer set since the last block (§4.2)', () => {
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder();
    const indexed = () => true;
    const big: Field = ['x-a', 'a'.repeat(100)]; // 135 octets in a table
    decodeAll(decoder, encoder.encode([big], indexed));
    expect(encoder.encode([big], indexed).toString('hex')).toBe('be');
    encoder.setMaxTableSize(0);
    encoder.setMaxTableSize(4096);
    // Size 0 (0x20) empties both tables, then 4096 (3f e1 1f); the field goes out as a literal again.
    const after = encoder.encode([big], indexed);
    expect(after.subarray(0, 4).toString('hex')).toBe('203fe11f');
    expect(after[4]).toBe(0x40);
    expect(decodeAll(decoder, after)).toEqual([big]);
    // 100 octets: announced (3f 45); an entry of 135 no longer fits, so it is not indexed (0x00).
    encoder.setMaxTableSize(100);
    const small = encoder.encode([big], indexed);
    expect(small.subarray(0, 3).toString('hex')).toBe('3f4500');
    expect(decodeAll(decoder, small)).toEqual([big]);
    // More than 4096: our table stays at 4096 (the size the peer's table started at): nothing to say.
    encoder.setMaxTableSize(4096);
    encoder.encode([], indexed);
    encoder.setMaxTableSize(65_536);
    expect(encoder.encode([[':method', 'POST']], indexed).toString('hex')).toBe('83');
  });

  it('stays within the limit of a peer that advertised less than 4096, whatever sizes follow', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6000 }).chain((limit) =>
          fc.tuple(
            fc.constant(limit),
            fc.array(
              fc.record({
                fields: fc.array(fieldArbitrary, { maxLength: 8 }),
                newSizes: fc.array(fc.integer({ min: 0, max: limit }), { maxLength: 2 }),
              }),
              { maxLength: 8 },
            ),
          ),
        ),
        ([limit, blocks]) => {
          // The decoder refuses any size update over `limit` and any index past its own table.
          const encoder = new HpackEncoder(limit);
          const decoder = new HpackDecoder(limit);
          for (const { fields, newSizes } of blocks) {
            for (const size of newSizes) encoder.setMaxTableSize(size);
            expect(
              decodeAll(
                decoder,
                encoder.encode(fields, () => true),
              ),
            ).toEqual(fields);
          }
        },
      ),
    );
  });
});
