import {
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
} from 'node:http2';
import { connect, type Socket } from 'node:net';
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

// --- Against nghttp2 (node:http2's server): our encoder's requests, its encoder's answers. ---

/** A small deterministic generator (mulberry32), so a failing run can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const FRAME_HEADERS = 0x1;
const FRAME_SETTINGS = 0x4;
const FRAME_PING = 0x6;
const FRAME_GOAWAY = 0x7;
const FRAME_RST_STREAM = 0x3;
const FRAME_CONTINUATION = 0x9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;

function frame(type: number, flags: number, stream: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream, 5);
  out.set(payload, 9);
  return out;
}

/**
 * The client side of one raw HTTP/2 connection, just enough for header blocks: answers SETTINGS and
 * PING, joins HEADERS + CONTINUATION and decodes each block with `decoder` in arrival order.
 */
class RawClient {
  readonly blocks = new Map<number, Field[][]>();
  readonly ended = new Set<number>();
  continuations = 0;
  /** Every header block received, joined, in order. */
  readonly rawBlocks: Array<{ stream: number; block: Buffer }> = [];
  peerTableSize: number | undefined;
  #buffered = Buffer.alloc(0);
  #pending: { stream: number; flags: number; parts: Buffer[] } | undefined;
  #settled = false;
  #onProgress: (() => void) | undefined;
  failure: Error | undefined;

  constructor(
    readonly socket: Socket,
    readonly decoder: HpackDecoder,
    readonly onTableSize: (size: number) => void,
  ) {
    socket.on('data', (chunk: Buffer) => {
      try {
        this.#read(chunk);
      } catch (error) {
        this.failure = error as Error;
        socket.destroy();
      }
      this.#onProgress?.();
    });
    socket.on('close', () => {
      this.failure ??= new Error('the server closed the connection');
      this.#onProgress?.();
    });
  }

  /** Waits (at most `ms`) until the server's SETTINGS arrived. */
  settings(ms: number): Promise<void> {
    return this.#until(() => this.#settled, ms, 'the server SETTINGS frame');
  }

  /** Waits (at most `ms`) until every stream in `streams` ended. */
  ends(streams: number[], ms: number): Promise<void> {
    return this.#until(
      () => streams.every((stream) => this.ended.has(stream)),
      ms,
      'the end of every stream',
    );
  }

  #until(done: () => boolean, ms: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      this.#onProgress = () => {
        if (this.failure !== undefined) reject(this.failure);
        else if (!done()) return;
        else resolve();
        clearTimeout(timer);
        this.#onProgress = undefined;
      };
      this.#onProgress();
    });
  }

  #read(chunk: Buffer): void {
    this.#buffered = Buffer.concat([this.#buffered, chunk]);
    while (this.#buffered.length >= 9) {
      const length = this.#buffered.readUIntBE(0, 3);
      if (this.#buffered.length < 9 + length) return;
      const type = this.#buffered[3] as number;
      const flags = this.#buffered[4] as number;
      const stream = this.#buffered.readUInt32BE(5) & 0x7fffffff;
      const payload = this.#buffered.subarray(9, 9 + length);
      this.#buffered = this.#buffered.subarray(9 + length);
      this.#frame(type, flags, stream, payload);
    }
  }

  #frame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.#pending !== undefined && type !== FRAME_CONTINUATION) throw new Error('CONTINUATION expected');
    if (type === FRAME_SETTINGS && (flags & 1) === 0) {
      for (let at = 0; at + 6 <= payload.length; at += 6) {
        if (payload.readUInt16BE(at) === 0x1) {
          this.peerTableSize = payload.readUInt32BE(at + 2);
          this.onTableSize(this.peerTableSize);
        }
      }
      this.socket.write(frame(FRAME_SETTINGS, 1, 0));
      this.#settled = true;
    } else if (type === FRAME_PING && (flags & 1) === 0) {
      this.socket.write(frame(FRAME_PING, 1, 0, payload));
    } else if (type === FRAME_GOAWAY || type === FRAME_RST_STREAM) {
      throw new Error(`the server sent frame type ${type}: ${payload.toString('hex')}`);
    } else if (type === FRAME_HEADERS) {
      let start = 0;
      let end = payload.length;
      if (flags & 0x8) {
        start += 1;
        end -= payload[0] as number;
      }
      if (flags & 0x20) start += 5;
      this.#pending = { stream, flags, parts: [payload.subarray(start, end)] };
    } else if (type === FRAME_CONTINUATION) {
      if (this.#pending?.stream !== stream) throw new Error('unexpected CONTINUATION');
      this.#pending.parts.push(payload);
      this.continuations++;
    } else {
      return;
    }
    if (this.#pending !== undefined && (flags & END_HEADERS) !== 0) {
      const { stream: id, flags: first, parts } = this.#pending;
      this.#pending = undefined;
      const block = Buffer.concat(parts);
      this.rawBlocks.push({ stream: id, block });
      const blocks = this.blocks.get(id) ?? [];
      blocks.push(decodeAll(this.decoder, block));
      this.blocks.set(id, blocks);
      if (first & END_STREAM) this.ended.add(id);
    }
  }
}

describe('HpackEncoder and HpackDecoder against nghttp2 (a node:http2 server)', () => {
  it('carries 50 requests and their answers and trailers on one connection, both tables changing', async () => {
    const random = seeded(16);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const text = (length: number, alphabet: string) =>
      Array.from({ length }, () => pick([...alphabet])).join('');
    const PRINTABLE = Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    const LATIN1 = `${PRINTABLE}\u00e9\u00fc\u00ff\u0080`;
    const pool = ['ok', 'application/grpc', 'x'.repeat(40), 'trace-1f2e3d', 'gzip'];
    /** Random fields: names that repeat across answers, values that repeat or not, some long. */
    const fields = (prefix: string, count: number): Record<string, string> => {
      const out: Record<string, string> = {};
      for (let i = 0; i < count; i++) {
        const name = `${prefix}-${text(1 + Math.floor(random() * 2), 'abcdef')}`;
        const roll = random();
        out[name] =
          roll < 0.4
            ? pick(pool)
            : roll < 0.9
              ? text(Math.floor(random() * 60), 'abcdefghijklmnopqrstuvwxyz0123456789-')
              : `${text(1, PRINTABLE)}${text(Math.floor(random() * 300), LATIN1)}${text(1, PRINTABLE)}`;
      }
      return out;
    };

    const answered = new Map<number, { headers: Record<string, string>; trailers: Record<string, string> }>();
    const seen = new Map<number, IncomingHttpHeaders>();
    // The server asks for a 256-octet table from our encoder: we must announce it and evict to fit.
    const server = createServer({ settings: { headerTableSize: 256 } });
    const sessions: ServerHttp2Session[] = [];
    server.on('session', (session) => sessions.push(session));
    server.on('stream', (stream, headers) => {
      const id = stream.id as number;
      seen.set(id, headers);
      const sent: Record<string, string> = {
        date: 'Tue, 01 Dec 2026 13:00:00 GMT',
        ...fields('x-h', 1 + Math.floor(random() * 8)),
      };
      // One answer larger than a frame (16 KiB): nghttp2 sends it as HEADERS + CONTINUATION.
      if (id === 21) sent['x-large'] = text(30_000, 'aceiost');
      const trailers = {
        'grpc-status': pick(['0', '0', '5', '14']),
        'grpc-message': pick(['', 'not found', text(30, PRINTABLE)]),
        ...fields('x-t', Math.floor(random() * 4)),
      };
      answered.set(id, { headers: sent, trailers });
      stream.respond({ ':status': 200, ...sent } satisfies OutgoingHttpHeaders, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      stream.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    try {
      // We advertise a 1024-octet table: nghttp2's encoder must announce it and evict more often.
      const encoder = new HpackEncoder();
      const client = new RawClient(socket, new HpackDecoder(1024), (size) => encoder.setMaxTableSize(size));
      const ourSettings = Buffer.alloc(6);
      ourSettings.writeUInt16BE(0x1, 0);
      ourSettings.writeUInt32BE(1024, 2);
      socket.write(
        Buffer.concat([
          Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
          frame(FRAME_SETTINGS, 0, 0, ourSettings),
        ]),
      );
      await client.settings(5_000);
      expect(client.peerTableSize).toBe(256);

      const constant = new Set([':path', ':authority', 'content-type', 'te', 'user-agent']);
      const requests = new Map<number, Field[]>();
      const firstBlocks: Buffer[] = [];
      const batch = async (first: number, count: number) => {
        const out: Buffer[] = [];
        const ids: number[] = [];
        for (let i = first; i < first + count; i++) {
          const id = 2 * i + 1;
          const request: Field[] = [
            [':method', 'POST'],
            [':scheme', 'http'],
            [':path', `/inference.GRPCInferenceService/${pick(['ModelInfer', 'ModelReady', 'ServerLive'])}`],
            [':authority', `127.0.0.1:${port}`],
            ['content-type', 'application/grpc'],
            ['te', 'trailers'],
            ['user-agent', 'infergate-hpack-test'],
            ['grpc-timeout', `${1 + Math.floor(random() * 10_000)}m`],
            ...Object.entries(fields('x-q', Math.floor(random() * 4))),
          ];
          requests.set(id, request);
          ids.push(id);
          const block = encoder.encode(request, (name) => constant.has(name));
          if (i === first) firstBlocks.push(block);
          out.push(frame(FRAME_HEADERS, END_STREAM | END_HEADERS, id, block));
        }
        socket.write(Buffer.concat(out));
        await client.ends(ids, 10_000);
      };
      await batch(0, 25);
      // Mid-connection the server shrinks our table to 64 octets (it holds one of our fields at a time).
      await new Promise<void>((resolve, reject) =>
        sessions[0]?.settings({ headerTableSize: 64 }, (error) => (error ? reject(error) : resolve())),
      );
      expect(client.peerTableSize).toBe(64);
      await batch(25, 25);
      // Each batch's first block started with the size update nghttp2 requires: 256 (3f e1 01), then
      // 64 (3f 21, followed by :method POST, 83).
      expect(firstBlocks.map((block) => block.subarray(0, 3).toString('hex'))).toEqual(['3fe101', '3f2183']);

      for (const [id, request] of requests) {
        // nghttp2 decoded what our encoder sent.
        const headers = seen.get(id);
        for (const [name, value] of request) expect(headers?.[name], `stream ${id} ${name}`).toBe(value);
        // Our decoder decoded what nghttp2 encoded: the answer's headers, then its trailers.
        const { headers: sent, trailers } = answered.get(id) ?? { headers: {}, trailers: {} };
        const [head, tail, ...rest] = client.blocks.get(id) ?? [];
        expect(rest).toEqual([]);
        expect(head).toEqual([[':status', '200'], ...Object.entries(sent)]);
        expect(tail).toEqual(Object.entries(trailers));
      }
      // nghttp2 used its dynamic table: many blocks mean nothing to a decoder without the connection's table.
      const needTable = client.rawBlocks.filter(({ block }) => {
        try {
          new HpackDecoder(1024).decode(block, () => {});
          return false;
        } catch (error) {
          expect(error).toBeInstanceOf(HpackError);
          return true;
        }
      });
      expect(needTable.length).toBeGreaterThan(client.rawBlocks.length / 2);
      // It announced our 1024-octet table first (3f e1 07), and used Huffman coding: the 30,000
      // letters of stream 21, 5 bits each, arrived in far fewer octets (still over one frame).
      expect(client.rawBlocks[0]?.block.subarray(0, 3).toString('hex')).toBe('3fe107');
      const large = client.rawBlocks.find(({ stream }) => stream === 21)?.block;
      expect(large?.length).toBeLessThan(0.7 * 30_000);
      expect(client.continuations).toBeGreaterThan(0);
    } finally {
      socket.destroy();
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
