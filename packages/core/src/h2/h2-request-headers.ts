// A request's header block, encoded so that the usual call costs almost nothing: the fields that
// are the same for every call to a path sit in the encoder's dynamic table and go out as one byte
// each, and the grpc-timeout literal is kept per deadline text.
import { DEFAULT_HEADER_TABLE_SIZE } from './h2-frame-types.js';
import type { HeaderTableSizeListener } from './h2-settings.js';
import type { SessionStream } from './h2-stream.js';
import { HpackEncoder } from './hpack.js';

/** The most header-block pieces kept per path and per deadline text (then it starts over). */
const MAX_CACHED_BLOCKS = 64;

const indexAll = () => true;
const indexNone = () => false;

/** True if `block` is `count` one-byte indexed fields: sending it again changes no HPACK table. */
function allIndexed(block: Uint8Array, count: number): boolean {
  if (block.byteLength !== count) return false;
  for (let i = 0; i < count; i++) {
    const byte = block[i] as number;
    if (byte < 0x81 || byte === 0xff) return false;
  }
  return true;
}

/** Encodes the header blocks of one connection's requests (its HPACK encoder is this one's). */
export class RequestHeaders implements HeaderTableSizeListener {
  readonly #scheme: string;
  readonly #authority: string;
  readonly #encoder = new HpackEncoder(DEFAULT_HEADER_TABLE_SIZE);
  /** Per path: the constant fields once they sit in the encoder's table (one indexed byte each). */
  readonly #heads = new Map<string, Buffer>();
  /** Per grpc-timeout text: its literal (no table entry). Deadlines that vary per call make many. */
  readonly #timeouts = new Map<string, Buffer>();
  /** The per-call part of the header block `encode` made last (see there). */
  tail: Buffer | undefined;

  constructor(scheme: string, authority: string) {
    this.#scheme = scheme;
    this.#authority = authority;
  }

  /** The server's HEADER_TABLE_SIZE: the encoder follows it, and cached indexes no longer hold. */
  setTableSize(size: number): void {
    this.#encoder.setMaxTableSize(size);
    this.#heads.clear();
    this.#timeouts.clear();
  }

  /**
   * The request's header list size as HTTP/2 counts it (RFC 9113, 6.5.2): name + value octets + 32
   * per field. Names and values are one octet per character (latin1), as the encoder writes them.
   */
  listSize(stream: SessionStream): number {
    // :method POST, :scheme, :path, :authority, content-type application/grpc, te trailers.
    let size =
      6 * 32 + 11 + 7 + this.#scheme.length + 5 + stream.path.length + 10 + this.#authority.length + 28 + 10;
    const { timeout, headers } = stream;
    if (timeout !== undefined) size += 12 + timeout.length + 32;
    if (headers !== undefined) {
      for (const name in headers) size += name.length + (headers[name] as string).length + 32;
    }
    return size;
  }

  /** Why the request's header list is over the server's `limit`, or undefined if it is not. */
  overLimit(stream: SessionStream, limit: number): string | undefined {
    const size = this.listSize(stream);
    if (size <= limit) return undefined;
    return (
      `the call's metadata is ${size} bytes as HTTP/2 counts it (name + value + 32 per field), over the ` +
      `server's SETTINGS_MAX_HEADER_LIST_SIZE of ${limit}: the call was not sent; send less metadata`
    );
  }

  /**
   * A request's header block in two parts, so the usual request copies each once, into its frame:
   * the fixed fields (returned) and the per-call rest (`tail`, `undefined` if none), which the
   * caller takes and clears.
   */
  encode(stream: SessionStream): Buffer {
    let head = this.#heads.get(stream.path);
    if (head === undefined) {
      const encoded = this.#encoder.encode(
        [
          [':method', 'POST'],
          [':scheme', this.#scheme],
          [':path', stream.path],
          [':authority', this.#authority],
          ['content-type', 'application/grpc'],
          ['te', 'trailers'],
        ],
        indexAll,
      );
      if (allIndexed(encoded, 6)) {
        if (this.#heads.size >= MAX_CACHED_BLOCKS) this.#heads.clear();
        this.#heads.set(stream.path, encoded);
      } else {
        // Entries went into the table: indexes cached for other paths have moved.
        this.#heads.clear();
        this.#timeouts.clear();
      }
      head = encoded;
    }
    const { timeout, headers } = stream;
    let hasHeaders = false;
    if (headers !== undefined) for (const _ in headers) hasHeaders = true;
    if (!hasHeaders) {
      if (timeout === undefined) return head;
      let literal = this.#timeouts.get(timeout);
      if (literal === undefined) {
        literal = this.#encoder.encode([['grpc-timeout', timeout]], indexNone);
        if (this.#timeouts.size >= MAX_CACHED_BLOCKS) this.#timeouts.clear();
        this.#timeouts.set(timeout, literal);
      }
      this.tail = literal;
      return head;
    }
    const fields: [string, string][] = [];
    if (timeout !== undefined) fields.push(['grpc-timeout', timeout]);
    for (const name in headers) fields.push([name, (headers as Record<string, string>)[name] as string]);
    this.tail = this.#encoder.encode(fields, indexNone);
    return head;
  }
}
