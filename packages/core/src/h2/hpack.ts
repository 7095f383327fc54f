// HPACK, HTTP/2's header compression (RFC 7541): one decoder for the header blocks a server sends,
// one encoder for the blocks we send, each holding its side's dynamic table for one connection.
// Strings are one octet per character (latin1), as node:http2 hands them over.

import { DynamicTable, entrySize } from './hpack-dynamic-table.js';
import { decodeHuffman, huffmanLength, writeHuffman } from './hpack-huffman.js';
import { STATIC_TABLE } from './hpack-spec-tables.js';

/** A malformed header block: the connection cannot go on (GOAWAY with COMPRESSION_ERROR). */
export class HpackError extends Error {
  override name = 'HpackError';
}

const STATIC_COUNT = STATIC_TABLE.length; // 61
const STATIC_NAMES = ['', ...STATIC_TABLE.map(([name]) => name)];
const STATIC_VALUES = ['', ...STATIC_TABLE.map(([, value]) => value)];
/** For each static name: its first index, and the index of each value it has in the table. */
const STATIC_BY_NAME = new Map<string, { index: number; values: Map<string, number> }>();
STATIC_TABLE.forEach(([name, value], i) => {
  const entry = STATIC_BY_NAME.get(name) ?? { index: i + 1, values: new Map<string, number>() };
  entry.values.set(value, i + 1);
  STATIC_BY_NAME.set(name, entry);
});

/** Integers this decoder accepts: more would only describe lengths and sizes no block can hold. */
const MAX_INTEGER = 0x7fffffff;
const DEFAULT_TABLE_SIZE = 4096;

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

/** The octets `bytes[start..end)` as a string, one character each. */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  if (end - start > 16)
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', start, end);
  let text = '';
  for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i] as number);
  return text;
}

export class HpackDecoder {
  readonly #limit: number;
  readonly #maxHeaderListSize: number;
  readonly #table: DynamicTable;
  #scratch = new Uint8Array(256);

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

  /** Decodes one complete header block (HEADERS + CONTINUATION payloads already joined), calling onHeader for each field in order. Throws HpackError. */
  decode(block: Uint8Array, onHeader: (name: string, value: string) => void): void {
    const table = this.#table;
    const end = block.length;
    let position = 0;
    let listSize = 0;
    let fields = false;
    while (position < end) {
      const first = block[position] as number;
      let name: string;
      let value: string;
      if (first >= 0x80) {
        // Indexed field (§6.1).
        const index = readInteger(block, position, 0x7f);
        position = cursor;
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
      if (listSize > this.#maxHeaderListSize) {
        throw new HpackError(`header list is larger than ${this.#maxHeaderListSize} octets`);
      }
      onHeader(name, value);
    }
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
    if (!huffman) return latin1(block, start, end);
    // A code is at least 5 bits long: `length` octets decode to at most length * 8 / 5 symbols.
    const room = Math.ceil((length * 8) / 5);
    if (this.#scratch.length < room) this.#scratch = new Uint8Array(Math.max(room, 2 * this.#scratch.length));
    const written = decodeHuffman(block, start, end, this.#scratch);
    if (written < 0) throw new HpackError('malformed Huffman string (EOS or bad padding)');
    return latin1(this.#scratch, 0, written);
  }
}

/** Names whose fields go out as never indexed (§7.1.3) when the caller does not index them. */
const SENSITIVE = new Set(['authorization', 'proxy-authorization', 'cookie']);
/** Our encoder's table never grows past this: it holds a few constant fields per connection. */
const ENCODER_TABLE_SIZE = 4096;

/** Writes an integer with an N-bit prefix (§5.1) after the flag bits `flags`; returns the end offset. */
function writeInteger(target: Uint8Array, at: number, value: number, flags: number, mask: number): number {
  if (value < mask) {
    target[at] = flags | value;
    return at + 1;
  }
  target[at++] = flags | mask;
  let rest = value - mask;
  while (rest >= 0x80) {
    target[at++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 128);
  }
  target[at] = rest;
  return at + 1;
}

export class HpackEncoder {
  readonly #table: DynamicTable;
  /** Entries in our table by name and value: the sequence number of the newest (see #inserted). */
  readonly #byField = new Map<string, Map<string, number>>();
  /** The newest entry in our table for each name. */
  readonly #byName = new Map<string, number>();
  /** Entries ever added: the entry numbered `sequence` has index 61 + #inserted - sequence. */
  #inserted = 0;
  /** Size updates owed before the next block (§4.2): the smallest and the last limit since the last block. */
  #pendingSmallest = Number.POSITIVE_INFINITY;
  #pendingLast = 0;
  #scratch = Buffer.allocUnsafeSlow(512);

  /** @param maxTableSize the peer's SETTINGS_HEADER_TABLE_SIZE. @default 4096 */
  constructor(maxTableSize = DEFAULT_TABLE_SIZE) {
    this.#table = new DynamicTable(DEFAULT_TABLE_SIZE, (name, value) => this.#evicted(name, value));
    this.setMaxTableSize(maxTableSize);
  }

  /** The peer's SETTINGS_HEADER_TABLE_SIZE changed: the next block starts with a dynamic table size update when needed. */
  setMaxTableSize(size: number): void {
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new RangeError(`the header table size must be a non-negative integer, got ${size}`);
    }
    const target = Math.min(size, ENCODER_TABLE_SIZE);
    this.#pendingSmallest = Math.min(this.#pendingSmallest, target);
    this.#pendingLast = target;
  }

  /** Encodes one header block. `indexed` names fields worth adding to the dynamic table (constant per connection, e.g. :path, :authority, content-type, te, user-agent); everything else is a literal without indexing. */
  encode(
    fields: ReadonlyArray<readonly [name: string, value: string]>,
    indexed?: (name: string) => boolean,
  ): Buffer {
    const table = this.#table;
    let out = this.#scratch;
    let at = 0;
    if (this.#pendingSmallest !== Number.POSITIVE_INFINITY) {
      if (this.#pendingSmallest < table.maxSize) {
        at = writeInteger(out, at, this.#pendingSmallest, 0x20, 0x1f);
        table.resize(this.#pendingSmallest);
      }
      if (this.#pendingLast !== table.maxSize) {
        at = writeInteger(out, at, this.#pendingLast, 0x20, 0x1f);
        table.resize(this.#pendingLast);
      }
      this.#pendingSmallest = Number.POSITIVE_INFINITY;
    }
    for (const [name, value] of fields) {
      // Room for the longest form: two 5-octet lengths, a 5-octet index, the strings uncompressed.
      const room = at + name.length + value.length + 16;
      if (room > out.length) {
        const grown = Buffer.allocUnsafeSlow(Math.max(room, 2 * out.length));
        out.copy(grown, 0, 0, at);
        this.#scratch = out = grown;
      }
      const fixed = STATIC_BY_NAME.get(name);
      const staticIndex = fixed?.values.get(value);
      if (staticIndex !== undefined) {
        at = writeInteger(out, at, staticIndex, 0x80, 0x7f);
        continue;
      }
      const sequence = this.#byField.get(name)?.get(value);
      if (sequence !== undefined) {
        at = writeInteger(out, at, STATIC_COUNT + this.#inserted - sequence, 0x80, 0x7f);
        continue;
      }
      let nameIndex = fixed?.index ?? 0;
      if (nameIndex === 0) {
        const newest = this.#byName.get(name);
        if (newest !== undefined) nameIndex = STATIC_COUNT + this.#inserted - newest;
      }
      if (indexed?.(name) === true && entrySize(name, value) <= table.maxSize) {
        // Literal with incremental indexing (§6.2.1); Huffman-coded when not longer, as it is sent once.
        at = writeInteger(out, at, nameIndex, 0x40, 0x3f);
        if (nameIndex === 0) at = writeString(out, at, name, true);
        at = writeString(out, at, value, true);
        this.#add(name, value);
      } else {
        // Literal without indexing (§6.2.2) or never indexed (§6.2.3).
        at = writeInteger(out, at, nameIndex, SENSITIVE.has(name) ? 0x10 : 0x00, 0x0f);
        if (nameIndex === 0) at = writeString(out, at, name, false);
        at = writeString(out, at, value, false);
      }
    }
    const block = Buffer.allocUnsafe(at);
    out.copy(block, 0, 0, at);
    return block;
  }

  #add(name: string, value: string): void {
    // The table evicts first (calling #evicted), then holds the entry.
    this.#table.add(name, value);
    const sequence = this.#inserted++;
    const byValue = this.#byField.get(name) ?? new Map<string, number>();
    byValue.set(value, sequence);
    this.#byField.set(name, byValue);
    this.#byName.set(name, sequence);
  }

  /** The oldest entry left the table: forget it, unless a newer entry holds the same name or field. */
  #evicted(name: string, value: string): void {
    const sequence = this.#inserted - this.#table.count - 1;
    const byValue = this.#byField.get(name);
    if (byValue?.get(value) === sequence) {
      byValue.delete(value);
      if (byValue.size === 0) this.#byField.delete(name);
    }
    if (this.#byName.get(name) === sequence) this.#byName.delete(name);
  }
}

/** Writes a string literal (§5.2), Huffman-coded if `huffman` and not longer; returns the end offset. */
function writeString(target: Buffer, at: number, text: string, huffman: boolean): number {
  if (huffman) {
    const length = huffmanLength(text);
    if (length <= text.length)
      return writeHuffman(text, target, writeInteger(target, at, length, 0x80, 0x7f));
  }
  let position = writeInteger(target, at, text.length, 0, 0x7f);
  if (text.length > 32) return position + target.write(text, position, 'latin1');
  for (let i = 0; i < text.length; i++) target[position++] = text.charCodeAt(i);
  return position;
}
