import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackEncoder, HpackError } from './hpack.js';
import { decodeHuffman, huffmanLength, writeHuffman } from './hpack-huffman.js';
import { HUFFMAN_CODE } from './hpack-spec-tables.js';

type Field = readonly [string, string];

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

function decodeAll(decoder: HpackDecoder, block: Uint8Array): Field[] {
  const fields: Field[] = [];
  decoder.decode(block, (name, value) => fields.push([name, value]));
  return fields;
}

const request1: Field[] = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', '/'],
  [':authority', 'www.example.com'],
];
const request2: Field[] = [...request1, ['cache-control', 'no-cache']];
const request3: Field[] = [
  [':method', 'GET'],
  [':scheme', 'https'],
  [':path', '/index.html'],
  [':authority', 'www.example.com'],
  ['custom-key', 'custom-value'],
];
const response1: Field[] = [
  [':status', '302'],
  ['cache-control', 'private'],
  ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
  ['location', 'https://www.example.com'],
];
const response2: Field[] = [[':status', '307'], ...response1.slice(1)];
const response3: Field[] = [
  [':status', '200'],
  ['cache-control', 'private'],
  ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
  ['location', 'https://www.example.com'],
  ['content-encoding', 'gzip'],
  ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
];

// RFC 7541 Appendix C: each sequence runs on one decoder (C.5 and C.6 with a 256-octet table).
const C3 = [
  ['828684410f7777772e6578616d706c652e636f6d', request1],
  ['828684be58086e6f2d6361636865', request2],
  ['828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565', request3],
] as const;
const C4 = [
  ['828684418cf1e3c2e5f23a6ba0ab90f4ff', request1],
  ['828684be5886a8eb10649cbf', request2],
  ['828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf', request3],
] as const;
const C5 = [
  [
    `4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d54
     6e1768747470733a2f2f7777772e6578616d706c652e636f6d`,
    response1,
  ],
  ['4803333037c1c0bf', response2],
  [
    `88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d
     4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b207665
     7273696f6e3d31`,
    response3,
  ],
] as const;
const C6 = [
  [
    `488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b
     97c8e9ae82ae43d3`,
    response1,
  ],
  ['4883640effc1c0bf', response2],
  [
    `88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdf
     cd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007`,
    response3,
  ],
] as const;

describe('HpackDecoder on the examples of RFC 7541 Appendix C', () => {
  it('C.2: a literal with indexing, without indexing, never indexed, an indexed field', () => {
    // C.2.1 adds custom-key to the table: an indexed reference to it (62) then works.
    const decoder = new HpackDecoder();
    expect(decodeAll(decoder, hex('400a637573746f6d2d6b65790d637573746f6d2d686561646572'))).toEqual([
      ['custom-key', 'custom-header'],
    ]);
    expect(decodeAll(decoder, hex('be'))).toEqual([['custom-key', 'custom-header']]);
    // C.2.2 and C.2.3 add nothing: 62 is still custom-key, 63 does not exist.
    expect(decodeAll(new HpackDecoder(), hex('040c2f73616d706c652f70617468'))).toEqual([
      [':path', '/sample/path'],
    ]);
    const literals = new HpackDecoder();
    decodeAll(literals, hex('040c2f73616d706c652f70617468'));
    decodeAll(literals, hex('100870617373776f726406736563726574'));
    expect(() => decodeAll(literals, hex('be'))).toThrow(HpackError);
    expect(decodeAll(new HpackDecoder(), hex('100870617373776f726406736563726574'))).toEqual([
      ['password', 'secret'],
    ]);
    expect(decodeAll(new HpackDecoder(), hex('82'))).toEqual([[':method', 'GET']]);
  });

  for (const [title, vectors, tableSize] of [
    ['C.3: requests without Huffman coding', C3, 4096],
    ['C.4: requests with Huffman coding', C4, 4096],
    ['C.5: responses without Huffman coding, evicting from a 256-octet table', C5, 256],
    ['C.6: responses with Huffman coding, evicting from a 256-octet table', C6, 256],
  ] as const) {
    it(title, () => {
      const decoder = new HpackDecoder(tableSize);
      for (const [block, fields] of vectors) expect(decodeAll(decoder, hex(block))).toEqual(fields);
    });
  }

  it('C.5: after the third response the table holds only its three newest entries (215 octets)', () => {
    const decoder = new HpackDecoder(256);
    for (const [block] of C5) decodeAll(decoder, hex(block));
    expect(decodeAll(decoder, hex('bebfc0'))).toEqual([
      ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
      ['content-encoding', 'gzip'],
      ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
    ]);
    expect(() => decodeAll(decoder, hex('c1'))).toThrow(HpackError);
  });
});

describe('HpackEncoder on the examples of RFC 7541 Appendix C', () => {
  it('C.4: indexes :authority, cache-control and custom-key, Huffman-coding what it indexes', () => {
    const encoder = new HpackEncoder();
    const indexed = (name: string) => [':authority', 'cache-control', 'custom-key'].includes(name);
    for (const [block, fields] of C4) expect(encoder.encode(fields, indexed).toString('hex')).toBe(block);
  });

  it('C.6: indexes every field and evicts as a 256-octet table must, after announcing the size', () => {
    const encoder = new HpackEncoder(256);
    const ours = C6.map(([, fields]) => encoder.encode(fields, () => true).toString('hex'));
    const theirs = C6.map(([block]) => block.replace(/\s+/g, ''));
    // The peer's table starts at HTTP/2's 4096 octets: the first block says 256 (3f e1 01) first.
    expect(ours).toEqual([`3fe101${theirs[0]}`, theirs[1], theirs[2]]);
  });

  it('C.2.2 and C.2.4: a field it does not index is a literal without indexing, a static one an index', () => {
    const encoder = new HpackEncoder();
    expect(encoder.encode([[':path', '/sample/path']]).toString('hex')).toBe('040c2f73616d706c652f70617468');
    expect(encoder.encode([[':method', 'GET']]).toString('hex')).toBe('82');
    expect(encoder.encode([[':method', 'POST']]).toString('hex')).toBe('83');
  });

  it('sends the authorization field as never indexed when it is not indexed', () => {
    const encoder = new HpackEncoder();
    // 0x10 | 7 (authorization's static name index 23 needs a 4-bit prefix continuation: 15 + 8).
    expect(encoder.encode([['authorization', 'Bearer t']]).toString('hex')).toBe('1f08084265617265722074');
  });
});

describe('the Huffman code', () => {
  it('is the canonical, complete code of Appendix B', () => {
    let kraft = 0;
    for (let symbol = 0; symbol <= 256; symbol++) {
      const code = HUFFMAN_CODE[2 * symbol] as number;
      const length = HUFFMAN_CODE[2 * symbol + 1] as number;
      expect(code).toBeLessThan(2 ** length);
      kraft += 2 ** -length;
    }
    expect(kraft).toBe(1);
  });

  it('decodes what it encodes, for any octets', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (octets) => {
        const text = Buffer.from(octets).toString('latin1');
        const coded = new Uint8Array(huffmanLength(text));
        expect(writeHuffman(text, coded, 0)).toBe(coded.length);
        const decoded = new Uint8Array(Math.ceil((coded.length * 8) / 5));
        const length = decodeHuffman(coded, 0, coded.length, decoded);
        expect(Buffer.from(decoded.subarray(0, length))).toEqual(Buffer.from(octets));
      }),
    );
  });
});

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

  it('refuses a header list over its limit', () => {
    const decoder = new HpackDecoder(4096, 100);
    expect(decodeAll(decoder, hex('82'))).toEqual([[':method', 'GET']]); // 7 + 3 + 32
    expect(decodeAll(decoder, hex('8282'))).toHaveLength(2); // 84
    expect(fails('828282', decoder)).toThrow(HpackError); // 126: over
  });

  it('throws nothing but HpackError, for any octets and any damage to a valid block', () => {
    const valid = [...C4, ...C6].map(([block]) => hex(block));
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
