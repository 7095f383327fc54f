// The Huffman code of RFC 7541 Appendix B, as hpack-huffman.ts encodes and decodes it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHuffman, huffmanLength, writeHuffman } from './hpack-huffman.js';
import { HUFFMAN_CODE } from './hpack-spec-tables.js';

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
