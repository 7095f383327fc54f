// HPACK's encoder side (RFC 7541) for the header blocks we send: static-table matches as indexes,
// the fields the caller names as constant per connection added to the dynamic table (and then sent
// as one-octet indexes), everything else as literals without indexing.
import { DynamicTable, entrySize } from './hpack-dynamic-table.js';
import { huffmanLength, writeHuffman } from './hpack-huffman.js';
import { DEFAULT_TABLE_SIZE, STATIC_TABLE } from './hpack-spec-tables.js';

const STATIC_COUNT = STATIC_TABLE.length;

/** What the static table offers for a name, and how a literal of it goes out when not indexed. */
interface StaticName {
  /** The name's first index. */
  index: number;
  /** The index of each value the table has for the name. */
  values: Map<string, number>;
  /** 0x10 (never indexed, §7.1.3) for credentials, else 0x00 (without indexing). */
  literalFlags: number;
}
const STATIC_BY_NAME = new Map<string, StaticName>();
STATIC_TABLE.forEach(([name, value], i) => {
  const sensitive = name === 'authorization' || name === 'proxy-authorization' || name === 'cookie';
  const entry = STATIC_BY_NAME.get(name) ?? {
    index: i + 1,
    values: new Map(),
    literalFlags: sensitive ? 0x10 : 0,
  };
  entry.values.set(value, i + 1);
  STATIC_BY_NAME.set(name, entry);
});

/** Our entries for one name: the sequence number (see HpackEncoder.#inserted) of each value, and of the newest. */
interface DynamicName {
  values: Map<string, number>;
  newest: number;
}

/** The size of the slabs blocks are written into. */
const SLAB_SIZE = 16_384;
/** Our table never grows past this (the size the peer's starts at): it holds a few constant fields. */
const OUR_TABLE_SIZE = DEFAULT_TABLE_SIZE;

/** Writes an integer with an N-bit prefix (§5.1) after the flag bits `flags`; returns the end offset. */
function writeInteger(target: Uint8Array, at: number, value: number, flags: number, mask: number): number {
  if (value < mask) {
    target[at] = flags | value;
    return at + 1;
  }
  let position = at;
  target[position++] = flags | mask;
  let rest = value - mask;
  while (rest >= 0x80) {
    target[position++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 128);
  }
  target[position] = rest;
  return position + 1;
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

export class HpackEncoder {
  readonly #table: DynamicTable;
  readonly #dynamic = new Map<string, DynamicName>();
  /** Entries ever added: the one numbered `sequence` has index 61 + #inserted - sequence. */
  #inserted = 0;
  /** Size updates owed before the next block (§4.2): the smallest and the last size since the last block. */
  #pendingSmallest = Number.POSITIVE_INFINITY;
  #pendingLast = 0;
  /**
   * Blocks are written one after another into this slab and handed out as views of it, never
   * overwritten: no allocation or copy per block (Node's Buffer pool works the same way).
   */
  #slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
  #slabUsed = 0;

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
    const target = Math.min(size, OUR_TABLE_SIZE);
    this.#pendingSmallest = Math.min(this.#pendingSmallest, target);
    this.#pendingLast = target;
  }

  /** Encodes one header block. `indexed` names fields worth adding to the dynamic table (constant per connection, e.g. :path, :authority, content-type, te, user-agent); everything else is a literal without indexing. */
  encode(
    fields: ReadonlyArray<readonly [name: string, value: string]>,
    indexed?: (name: string) => boolean,
  ): Buffer {
    const table = this.#table;
    let out = this.#slab;
    let start = this.#slabUsed;
    if (start + 12 > out.length) {
      this.#slab = out = Buffer.allocUnsafeSlow(SLAB_SIZE);
      start = 0;
    }
    let at = start;
    if (this.#pendingSmallest !== Number.POSITIVE_INFINITY) at = this.#sizeUpdates(out, at);
    for (let i = 0; i < fields.length; i++) {
      const [name, value] = fields[i] as readonly [string, string];
      // Room for the longest form: a 5-octet index, two 5-octet lengths, the strings uncompressed.
      const room = at + name.length + value.length + 16;
      if (room > out.length) {
        // A new slab, with the block so far moved to its start.
        const slab = Buffer.allocUnsafeSlow(Math.max(SLAB_SIZE, 2 * (room - start)));
        out.copy(slab, 0, start, at);
        at -= start;
        start = 0;
        this.#slab = out = slab;
      }
      const fixed = STATIC_BY_NAME.get(name);
      if (fixed !== undefined) {
        const index = fixed.values.get(value);
        if (index !== undefined) {
          at = writeInteger(out, at, index, 0x80, 0x7f);
          continue;
        }
      }
      const ours = this.#dynamic.get(name);
      if (ours !== undefined) {
        const sequence = ours.values.get(value);
        if (sequence !== undefined) {
          at = writeInteger(out, at, STATIC_COUNT + this.#inserted - sequence, 0x80, 0x7f);
          continue;
        }
      }
      // The static name first (its index never changes), else ours, else the name as a string.
      const nameIndex =
        fixed?.index ?? (ours === undefined ? 0 : STATIC_COUNT + this.#inserted - ours.newest);
      if (indexed?.(name) === true && entrySize(name, value) <= table.maxSize) {
        // Literal with incremental indexing (§6.2.1); Huffman-coded when not longer, as it goes out once.
        at = writeInteger(out, at, nameIndex, 0x40, 0x3f);
        if (nameIndex === 0) at = writeString(out, at, name, true);
        at = writeString(out, at, value, true);
        this.#add(name, value);
      } else {
        // Literal without indexing (§6.2.2), or never indexed (§6.2.3) for credentials.
        at = writeInteger(out, at, nameIndex, fixed?.literalFlags ?? 0, 0x0f);
        if (nameIndex === 0) at = writeString(out, at, name, false);
        at = writeString(out, at, value, false);
      }
    }
    this.#slabUsed = at;
    return out.subarray(start, at);
  }

  /** Writes the size updates owed (at most 12 octets) and applies them to our table. */
  #sizeUpdates(out: Buffer, at: number): number {
    const table = this.#table;
    let position = at;
    if (this.#pendingSmallest < table.maxSize) {
      position = writeInteger(out, position, this.#pendingSmallest, 0x20, 0x1f);
      table.resize(this.#pendingSmallest);
    }
    if (this.#pendingLast !== table.maxSize) {
      position = writeInteger(out, position, this.#pendingLast, 0x20, 0x1f);
      table.resize(this.#pendingLast);
    }
    this.#pendingSmallest = Number.POSITIVE_INFINITY;
    return position;
  }

  #add(name: string, value: string): void {
    // The table evicts first (calling #evicted), then holds the entry.
    this.#table.add(name, value);
    const sequence = this.#inserted++;
    const ours = this.#dynamic.get(name);
    if (ours === undefined)
      this.#dynamic.set(name, { values: new Map([[value, sequence]]), newest: sequence });
    else {
      ours.values.set(value, sequence);
      ours.newest = sequence;
    }
  }

  /** The oldest entry left the table: forget it, unless a newer entry holds the same field. */
  #evicted(name: string, value: string): void {
    const sequence = this.#inserted - this.#table.count - 1;
    const ours = this.#dynamic.get(name);
    if (ours === undefined) return;
    if (ours.values.get(value) === sequence) ours.values.delete(value);
    // Entries leave oldest first: when the newest of a name leaves, none of that name is left.
    if (ours.newest === sequence) this.#dynamic.delete(name);
  }
}
