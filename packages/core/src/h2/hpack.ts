// HPACK, HTTP/2's header compression (RFC 7541): one decoder for the header blocks a server sends,
// one encoder (hpack-encoder.ts) for the blocks we send, each holding its side's dynamic table for one
// connection. Strings are one octet per character (latin1), as node:http2 hands them over.

import { DynamicTable } from './hpack-dynamic-table.js';
import { decodeHuffman } from './hpack-huffman.js';
import { DEFAULT_TABLE_SIZE, STATIC_TABLE } from './hpack-spec-tables.js';

/** A malformed header block: the connection cannot go on (GOAWAY with COMPRESSION_ERROR). */
export class HpackError extends Error {
  override name = 'HpackError';
}

const STATIC_COUNT = STATIC_TABLE.length; // 61: index 62 is the dynamic table's newest entry
const STATIC_NAMES = ['', ...STATIC_TABLE.map(([name]) => name)];
const STATIC_VALUES = ['', ...STATIC_TABLE.map(([, value]) => value)];

/** Integers this decoder accepts: more would only describe lengths and sizes no block can hold. */
const MAX_INTEGER = 0x7fffffff;

// Where the last readInteger/readString stopped (saves an object per read; decoding is synchronous).
let cursor = 0;

/** Reads an integer with an N-bit prefix (§5.1) at `block[at]`; `mask` is 2^N - 1. */
function readInteger(block: Uint8Array, at: number, mask: number): number {
  let value = (block[at] as number) & mask;
  let position = at + 1;
  if (value === mask) {
    let scale = 1;
    for (;;) {
      if (position >= block.length) throw new HpackError('header block ends inside an integer');
      const octet = block[position++] as number;
      value += (octet & 0x7f) * scale;
      if (value > MAX_INTEGER) throw new HpackError('integer in header block is too large');
      if (octet < 0x80) break;
      scale *= 128;
      if (scale > 2 ** 28) throw new HpackError('integer in header block is too long');
    }
  }
  cursor = position;
  return value;
}

/** Strings up to this long are built a character at a time: cheaper than a call into Buffer. */
const SHORT_STRING = 8;
const EMPTY: Buffer = Buffer.alloc(0);
/** The largest Huffman scratch a decoder keeps between blocks. */
const KEPT_SCRATCH = 8192;

/** The octets `bytes[start..end)` as a string, one character each. */
function latin1(bytes: Buffer, start: number, end: number): string {
  if (end - start > SHORT_STRING) return bytes.toString('latin1', start, end);
  let text = '';
  for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i] as number);
  return text;
}

export class HpackDecoder {
  readonly #limit: number;
  readonly #maxHeaderListSize: number;
  readonly #table: DynamicTable;
  #scratch = Buffer.allocUnsafeSlow(256);
  /** The block being decoded, as a Buffer (for Buffer.toString). */
  #view = EMPTY;

  /**
   * @param maxTableSize the SETTINGS_HEADER_TABLE_SIZE we advertise: the largest dynamic table the
   *   server may ask for with a size update, and the table's size until it does. @default 4096
   * @param maxHeaderListSize the most one block may decode to, counted as HTTP/2's
   *   SETTINGS_MAX_HEADER_LIST_SIZE does (name + value octets + 32 per field). @default 65536
   */
  constructor(maxTableSize = DEFAULT_TABLE_SIZE, maxHeaderListSize = 65_536) {
    if (!Number.isSafeInteger(maxTableSize) || maxTableSize < 0 || maxTableSize > MAX_INTEGER) {
      throw new RangeError(`maxTableSize must be an integer from 0 to ${MAX_INTEGER}, got ${maxTableSize}`);
    }
    if (!Number.isSafeInteger(maxHeaderListSize) || maxHeaderListSize < 0) {
      throw new RangeError(`maxHeaderListSize must be a non-negative integer, got ${maxHeaderListSize}`);
    }
    this.#limit = maxTableSize;
    this.#maxHeaderListSize = maxHeaderListSize;
    this.#table = new DynamicTable(maxTableSize);
  }

  /**
   * Decodes one complete header block (HEADERS + CONTINUATION payloads already joined), calling
   * onHeader for each field in order. Returns false if the list is over `maxHeaderListSize`: the
   * fields past the limit are not handed over, but the block is decoded to its end, so the table
   * still follows the server's and only the stream need fail. Throws HpackError on a malformed
   * block. Every block the connection receives must be decoded, in order, even for a stream already
   * closed: the table follows the server's. After an HpackError the table is no longer the server's:
   * the connection must end.
   */
  decode(block: Uint8Array, onHeader: (name: string, value: string) => void): boolean {
    const table = this.#table;
    const end = block.length;
    this.#view = Buffer.isBuffer(block)
      ? block
      : Buffer.from(block.buffer, block.byteOffset, block.byteLength);
    let position = 0;
    let listSize = 0;
    let fields = false;
    while (position < end) {
      const first = block[position] as number;
      let name: string;
      let value: string;
      if (first >= 0x80) {
        // Indexed field (§6.1). Indexes up to 126 fit in the first octet.
        let index = first & 0x7f;
        if (index === 0x7f) {
          index = readInteger(block, position, 0x7f);
          position = cursor;
        } else position++;
        if (index <= STATIC_COUNT) {
          if (index === 0) throw new HpackError('header block uses index 0');
          name = STATIC_NAMES[index] as string;
          value = STATIC_VALUES[index] as string;
        } else {
          const dynamic = index - STATIC_COUNT;
          if (dynamic > table.count) throw new HpackError(`header block uses index ${index}, past the table`);
          name = table.name(dynamic);
          value = table.value(dynamic);
        }
      } else if (first >= 0x40) {
        // Literal with incremental indexing (§6.2.1).
        name = this.#name(block, position, 0x3f);
        value = this.#string(block, cursor);
        position = cursor;
        table.add(name, value);
      } else if (first >= 0x20) {
        // Dynamic table size update (§6.3): only before the block's first field (§4.2).
        if (fields) throw new HpackError('dynamic table size update after a header field');
        const size = readInteger(block, position, 0x1f);
        position = cursor;
        if (size > this.#limit) {
          throw new HpackError(`dynamic table size update to ${size}, over the ${this.#limit} allowed`);
        }
        table.resize(size);
        continue;
      } else {
        // Literal without indexing (§6.2.2) or never indexed (§6.2.3): the same to a decoder.
        name = this.#name(block, position, 0x0f);
        value = this.#string(block, cursor);
        position = cursor;
      }
      fields = true;
      listSize += name.length + value.length + 32;
      if (listSize <= this.#maxHeaderListSize) onHeader(name, value);
    }
    this.#view = EMPTY;
    return listSize <= this.#maxHeaderListSize;
  }

  /** A literal's name: indexed (N-bit prefix `mask`) or, with index 0, a string after the first octet. */
  #name(block: Uint8Array, at: number, mask: number): string {
    const index = readInteger(block, at, mask);
    if (index === 0) return this.#string(block, cursor);
    if (index <= STATIC_COUNT) return STATIC_NAMES[index] as string;
    const dynamic = index - STATIC_COUNT;
    if (dynamic > this.#table.count) throw new HpackError(`header block uses index ${index}, past the table`);
    return this.#table.name(dynamic);
  }

  /** A string literal (§5.2) at `block[at]`; leaves `cursor` after it. */
  #string(block: Uint8Array, at: number): string {
    if (at >= block.length) throw new HpackError('header block ends before a string');
    const huffman = (block[at] as number) >= 0x80;
    const length = readInteger(block, at, 0x7f);
    const start = cursor;
    const end = start + length;
    if (end > block.length) throw new HpackError('string runs past the end of the header block');
    cursor = end;
    if (!huffman) return latin1(this.#view, start, end);
    // A code is at least 5 bits long: `length` octets decode to at most length * 8 / 5 symbols.
    const room = Math.ceil((length * 8) / 5);
    let target = this.#scratch;
    if (target.length < room) {
      // Kept for the next strings up to a few KiB; a longer one gets memory of its own, let go after.
      target = Buffer.allocUnsafeSlow(Math.max(room, 2 * target.length));
      if (room <= KEPT_SCRATCH) this.#scratch = target;
    }
    const written = decodeHuffman(block, start, end, target);
    if (written < 0) throw new HpackError('malformed Huffman string (EOS or bad padding)');
    return latin1(target, 0, written);
  }
}

export { HpackEncoder } from './hpack-encoder.js';
