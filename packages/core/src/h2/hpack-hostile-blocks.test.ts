// HpackDecoder against malformed and hostile header blocks: every one refused with HpackError.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackError } from './hpack.js';

type Field = readonly [string, string];

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

function decodeAll(decoder: HpackDecoder, block: Uint8Array): Field[] {
  const fields: Field[] = [];
  decoder.decode(block, (name, value) => fields.push([name, value]));
  return fields;
}

/** Valid blocks to damage: RFC 7541's C.4 (requests) and C.6 (responses, a 256-octet table). */
const VALID_BLOCKS = [
  '828684418cf1e3c2e5f23a6ba0ab90f4ff',
  '828684be5886a8eb10649cbf',
  '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf',
  `488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b
   97c8e9ae82ae43d3`,
  '4883640effc1c0bf',
  `88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdf
   cd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007`,
];

describe('HpackDecoder against hostile blocks', () => {
  const fails =
    (block: string, decoder = new HpackDecoder()) =>
    () =>
      decodeAll(decoder, hex(block));

  it('refuses truncated and oversized integers', () => {
    expect(fails('ff')).toThrow(HpackError); // indexed, prefix full, no continuation
    expect(fails('ff80')).toThrow(HpackError); // continuation flag set on the last octet
    expect(fails('ffffffffff7f')).toThrow(HpackError); // past 2^31 - 1
    expect(fails('ff8080808080808000')).toThrow(HpackError); // too many continuation octets
  });

  it('refuses index 0 and indexes past the table', () => {
    expect(fails('80')).toThrow(HpackError);
    expect(fails('be')).toThrow(HpackError); // 62 on an empty dynamic table
    expect(fails('7e0161')).toThrow(HpackError); // literal whose name is index 62
    expect(fails('0f300161')).toThrow(HpackError); // without indexing, name index 15 + 48 = 63
  });

  it('refuses strings longer than the block and blocks that end inside a field', () => {
    expect(fails('007fffffff0f')).toThrow(HpackError); // a huge name length
    expect(fails('0003616263')).toThrow(HpackError); // name of 3, no value
    expect(fails('40')).toThrow(HpackError); // new name, then nothing
    expect(fails('0405616263')).toThrow(HpackError); // value of 5, 3 octets there
  });

  it('refuses a size update over the advertised limit or after a field', () => {
    expect(decodeAll(new HpackDecoder(), hex('3fe11f82'))).toEqual([[':method', 'GET']]); // 4096 is allowed
    expect(fails('3fe21f')).toThrow(HpackError); // 4097
    expect(fails('3fe11f', new HpackDecoder(100))).toThrow(HpackError);
    expect(fails('8220')).toThrow(HpackError);
  });

  it('evicts on a size update, and an entry larger than the table empties it', () => {
    const decoder = new HpackDecoder();
    decodeAll(decoder, hex('400a637573746f6d2d6b65790d637573746f6d2d686561646572')); // 55 octets
    expect(() => decodeAll(decoder, hex('3f1882'))).not.toThrow(); // size 55: kept
    expect(decodeAll(decoder, hex('be'))).toEqual([['custom-key', 'custom-header']]);
    expect(() => decodeAll(decoder, hex('3f1782'))).not.toThrow(); // size 54: evicted
    expect(fails('be', decoder)).toThrow(HpackError);
    const small = new HpackDecoder(40);
    expect(decodeAll(small, hex('4001610161'))).toEqual([['a', 'a']]); // 34 octets: kept
    expect(decodeAll(small, hex('be'))).toEqual([['a', 'a']]);
    expect(decodeAll(small, hex('4001620462626262'))).toEqual([['b', 'bbbb']]); // 37: evicts a
    expect(decodeAll(small, hex('be'))).toEqual([['b', 'bbbb']]);
    expect(decodeAll(small, hex(`40016309${'63'.repeat(9)}`))).toEqual([['c', 'c'.repeat(9)]]); // 42: emptied
    expect(fails('be', small)).toThrow(HpackError); // 41 > 40: emptied, not kept
  });

  it('refuses bad Huffman padding and EOS', () => {
    expect(decodeAll(new HpackDecoder(), hex('048107'))).toEqual([[':path', '0']]); // '0' + 111
    expect(decodeAll(new HpackDecoder(), hex('0480'))).toEqual([[':path', '']]);
    expect(fails('048100')).toThrow(HpackError); // padding of zeros
    expect(fails('048207ff')).toThrow(HpackError); // padding of 11 bits
    expect(fails('0484ffffffff')).toThrow(HpackError); // EOS
    expect(fails('0481ff')).toThrow(HpackError); // 8 bits of padding
  });

  it('hands over no field past its header list limit, says so, and keeps its table in step', () => {
    const decoder = new HpackDecoder(4096, 100);
    const fields: [string, string][] = [];
    const collect = (name: string, value: string) => fields.push([name, value]);
    expect(decoder.decode(hex('82'), collect)).toBe(true); // 7 + 3 + 32
    expect(decoder.decode(hex('8282'), collect)).toBe(true); // 84
    expect(fields).toHaveLength(3);
    fields.length = 0;
    // 126, over: and a literal with indexing past the limit still enters the table (index 62).
    expect(decoder.decode(hex('828282400178017a'), collect)).toBe(false);
    expect(fields).toEqual([
      [':method', 'GET'],
      [':method', 'GET'],
    ]);
    expect(decodeAll(decoder, hex('be'))).toEqual([['x', 'z']]);
  });

  it('throws nothing but HpackError, for any octets and any damage to a valid block', () => {
    const valid = VALID_BLOCKS.map(hex);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          fc
            .tuple(fc.constantFrom(...valid), fc.nat(), fc.nat(255), fc.nat())
            .map(([block, at, octet, cut]) => {
              const damaged = Uint8Array.from(block);
              damaged[at % damaged.length] = octet;
              return damaged.subarray(0, cut % (damaged.length + 1));
            }),
        ),
        (block) => {
          try {
            new HpackDecoder(256).decode(block, () => {});
          } catch (error) {
            expect(error).toBeInstanceOf(HpackError);
          }
        },
      ),
    );
  });
});
