// HPACK's Huffman code (RFC 7541 §5.2, Appendix B). Decoding runs a 16-way state machine, one
// step per 4 bits of input, built once from the code table: no per-bit loop when decoding.
import { HUFFMAN_CODE, HUFFMAN_EOS } from './hpack-spec-tables.js';

const SYMBOLS = HUFFMAN_EOS + 1;
const CODES = new Uint32Array(SYMBOLS);
const LENGTHS = new Uint8Array(SYMBOLS);
for (let symbol = 0; symbol < SYMBOLS; symbol++) {
  CODES[symbol] = HUFFMAN_CODE[2 * symbol] as number;
  LENGTHS[symbol] = HUFFMAN_CODE[2 * symbol + 1] as number;
}

// DECODE[state * 16 + nibble]: bits 0–7 the next state (an inner node of the code tree), bits 8–15
// the symbol completed by these 4 bits (a code is at least 5 bits long, so at most one), then two flags.
const EMITS = 1 << 16;
const FAILS = 1 << 17; // the 4 bits complete EOS, which must never appear inside a string
// Built on the first Huffman-coded string rather than at load (about a millisecond on a busy
// machine, which every import of the package would pay): most connections send few or none.
let DECODE: Uint32Array | undefined;
// ENDS[state]: a string may end in this state: the bits since the last symbol are all ones (a
// prefix of EOS) and at most 7 of them (§5.2).
let ENDS = new Uint8Array(0);

function buildDecoder(): Uint32Array {
  // The code tree: a complete binary tree with 257 leaves, so 256 inner nodes, the root is node 0.
  // A child is an inner node's number, or a leaf written as -1 - symbol.
  const innerNodes = SYMBOLS - 1;
  const children = new Int32Array(2 * innerNodes).fill(0x7fffffff);
  let nodes = 1;
  for (let symbol = 0; symbol < SYMBOLS; symbol++) {
    const code = CODES[symbol] as number;
    const length = LENGTHS[symbol] as number;
    let node = 0;
    for (let bit = length - 1; bit > 0; bit--) {
      const slot = 2 * node + ((code >>> bit) & 1);
      if (children[slot] === 0x7fffffff) children[slot] = nodes++;
      node = children[slot] as number;
    }
    children[2 * node + (code & 1)] = -1 - symbol;
  }
  if (nodes !== innerNodes || children.includes(0x7fffffff))
    throw new Error('HPACK Huffman table is not complete');

  const decode = new Uint32Array(innerNodes * 16);
  for (let state = 0; state < innerNodes; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const child = children[2 * node + ((nibble >>> bit) & 1)] as number;
        if (child >= 0) {
          node = child;
          continue;
        }
        const symbol = -1 - child;
        entry |= symbol === HUFFMAN_EOS ? FAILS : EMITS | (symbol << 8);
        node = 0;
      }
      decode[state * 16 + nibble] = entry | node;
    }
  }
  ENDS = new Uint8Array(innerNodes);
  for (let depth = 0, node = 0; depth < 8; depth++, node = children[2 * node + 1] as number) ENDS[node] = 1;
  DECODE = decode;
  return decode;
}

/**
 * Decodes the Huffman-coded octets `source[start..end)` into `target` (room for `(end - start) * 8 / 5`
 * octets), returning how many it wrote, or -1 when the input holds EOS or ends with bad padding.
 */
export function decodeHuffman(source: Uint8Array, start: number, end: number, target: Uint8Array): number {
  const table = DECODE ?? buildDecoder();
  let state = 0;
  let written = 0;
  for (let i = start; i < end; i++) {
    const octet = source[i] as number;
    let entry = table[(state << 4) | (octet >>> 4)] as number;
    if (entry & EMITS) target[written++] = entry >>> 8;
    else if (entry & FAILS) return -1;
    state = entry & 0xff;
    entry = table[(state << 4) | (octet & 15)] as number;
    if (entry & EMITS) target[written++] = entry >>> 8;
    else if (entry & FAILS) return -1;
    state = entry & 0xff;
  }
  return ENDS[state] === 1 ? written : -1;
}

/** How many octets the Huffman coding of `text` (one octet per character, as latin1) takes. */
export function huffmanLength(text: string): number {
  let bits = 0;
  for (let i = 0; i < text.length; i++) bits += LENGTHS[text.charCodeAt(i) & 0xff] as number;
  return (bits + 7) >>> 3;
}

/** Writes the Huffman coding of `text` at `target[offset]`, padded with ones; returns the end offset. */
export function writeHuffman(text: string, target: Uint8Array, offset: number): number {
  let pending = 0; // bits in `held` not yet written, always < 8 between symbols
  let held = 0;
  let at = offset;
  for (let i = 0; i < text.length; i++) {
    const symbol = text.charCodeAt(i) & 0xff;
    const code = CODES[symbol] as number;
    let length = LENGTHS[symbol] as number;
    // At most 16 bits are added at once, so `held` stays within 24 bits.
    if (length > 16) {
      length -= 16;
      held = (held << length) | (code >>> 16);
      pending += length;
      while (pending >= 8) {
        pending -= 8;
        target[at++] = held >>> pending;
      }
      held &= (1 << pending) - 1;
      length = 16;
    }
    held = (held << length) | (code & 0xffff & ((1 << length) - 1));
    pending += length;
    while (pending >= 8) {
      pending -= 8;
      target[at++] = held >>> pending;
    }
    held &= (1 << pending) - 1;
  }
  if (pending > 0) target[at++] = (held << (8 - pending)) | (0xff >>> pending);
  return at;
}
