// HPACK against the examples of RFC 7541 Appendix C, both ways, and the same blocks handed over as
// the framing layer hands them (views into larger buffers).
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackEncoder, HpackError } from './hpack.js';

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
    // C.2.2 and C.2.3 add nothing to the table: after them, index 62 does not exist.
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

  // The dynamic table after each sequence, newest first, as the RFC lists it (164 and 215 octets).
  const requestTable: Field[] = [
    ['custom-key', 'custom-value'],
    ['cache-control', 'no-cache'],
    [':authority', 'www.example.com'],
  ];
  const responseTable: Field[] = [
    ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
    ['content-encoding', 'gzip'],
    ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
  ];
  for (const [title, vectors, tableSize, table] of [
    ['C.3: requests without Huffman coding', C3, 4096, requestTable],
    ['C.4: requests with Huffman coding', C4, 4096, requestTable],
    ['C.5: responses without Huffman coding, evicting from a 256-octet table', C5, 256, responseTable],
    ['C.6: responses with Huffman coding, evicting from a 256-octet table', C6, 256, responseTable],
  ] as const) {
    it(title, () => {
      const decoder = new HpackDecoder(tableSize);
      for (const [block, fields] of vectors) expect(decodeAll(decoder, hex(block))).toEqual(fields);
      // Indexes 62–64 are the table's three entries; 65 is past it (evicted, for C.5 and C.6).
      expect(decodeAll(decoder, hex('bebfc0'))).toEqual(table);
      expect(() => decodeAll(decoder, hex('c1'))).toThrow(HpackError);
    });
  }
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
    // Never indexed (0x10) with a 4-bit name index: authorization's 23 is 15 (1f) + 8 (08), then the value.
    expect(encoder.encode([['authorization', 'Bearer t']]).toString('hex')).toBe('1f08084265617265722074');
  });
});

describe('blocks as the framing layer hands them over', () => {
  it('decodes a block that is a view into a larger buffer, as a Buffer or a Uint8Array', () => {
    for (const [vectors, tableSize] of [
      [C3, 4096],
      [C5, 256],
      [C6, 256],
    ] as const) {
      const asBuffer = new HpackDecoder(tableSize);
      const asArray = new HpackDecoder(tableSize);
      for (const [block, fields] of vectors) {
        const octets = hex(block);
        const frame = Buffer.alloc(octets.length + 40, 0xee);
        octets.copy(frame, 17);
        expect(decodeAll(asBuffer, frame.subarray(17, 17 + octets.length))).toEqual(fields);
        const array = new Uint8Array(frame.buffer, frame.byteOffset + 17, octets.length);
        expect(decodeAll(asArray, array)).toEqual(fields);
      }
    }
  });

  it('never overwrites a block it handed out, across slabs and for fields larger than a slab', () => {
    const encoder = new HpackEncoder();
    const handed: Array<[Buffer, string]> = [];
    for (let i = 0; i < 600; i++) {
      const fields: Field[] = [
        [':path', `/p/${i % 7}`],
        ['x-n', String(i).repeat(1 + (i % 40))],
      ];
      if (i % 97 === 0) fields.push(['x-big', 'b'.repeat(20_000 + i)]);
      const block = encoder.encode(fields, (name) => name === ':path');
      handed.push([block, block.toString('hex')]);
    }
    for (const [block, copy] of handed) expect(block.toString('hex')).toBe(copy);
    const decoder = new HpackDecoder();
    for (const [block] of handed.slice(0, 3)) expect(decodeAll(decoder, block)[0]?.[0]).toBe(':path');
  });
});
