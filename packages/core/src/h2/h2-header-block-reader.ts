// The header blocks the server sends (RFC 9113, 4.3 and 6.2, 6.10): a HEADERS frame's fragment
// (padding and priority taken off) and its CONTINUATION fragments, gathered up to a bound and then
// decoded with the connection's one HPACK decoder.
import {
  COMPRESSION_ERROR,
  DEFAULT_HEADER_TABLE_SIZE,
  ENHANCE_YOUR_CALM,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
  FRAME_SIZE_ERROR,
  PROTOCOL_ERROR,
} from './h2-frame-types.js';
import { OUR_MAX_HEADER_LIST_SIZE } from './h2-settings.js';
import { HpackDecoder, HpackError } from './hpack.js';

/**
 * The most frames one header block may come in. A server splits a block at our MAX_FRAME_SIZE (1 MiB)
 * or its own, never below 16 KiB: a block within our bound needs a few; more (empty CONTINUATIONs
 * in a loop) only keeps the connection busy.
 */
const MAX_BLOCK_FRAMES = 64;

export class HeaderBlockReader {
  readonly #decoder = new HpackDecoder(DEFAULT_HEADER_TABLE_SIZE, OUR_MAX_HEADER_LIST_SIZE);
  #parts: Buffer[] = [];
  #size = 0;
  #frames = 0;
  #fields: string[] = [];
  readonly #onField = (name: string, value: string) => {
    this.#fields.push(name, value);
  };
  /** The block being gathered: its stream and whether its HEADERS frame ended the stream. */
  streamId = 0;
  endStream = false;
  /**
   * The block just returned decoded to more than OUR_MAX_HEADER_LIST_SIZE: its fields stop at the
   * limit, and its stream must fail (the connection goes on: the table followed the whole block).
   */
  tooLarge = false;
  /** Set when a frame returned `undefined` because the connection must end: its code and why. */
  errorCode = 0;
  errorText = '';

  /**
   * A HEADERS frame (not on stream 0). Returns the block's fields (names and values alternating)
   * once it is complete; `undefined` while it waits for CONTINUATION or if it failed (`errorCode`).
   */
  headers(payload: Buffer, flags: number, id: number): string[] | undefined {
    let start = 0;
    let end = payload.byteLength;
    if ((flags & FLAG_PADDED) !== 0) {
      const pad = payload[0] as number;
      start = 1;
      if (pad >= end) return this.#fail(PROTOCOL_ERROR, 'HEADERS padding longer than the frame');
      end -= pad;
    }
    if ((flags & FLAG_PRIORITY) !== 0) start += 5;
    if (start > end) return this.#fail(FRAME_SIZE_ERROR, 'HEADERS too short for its flags');
    this.streamId = id;
    this.endStream = (flags & FLAG_END_STREAM) !== 0;
    return this.#add(payload.subarray(start, end), flags);
  }

  /** A CONTINUATION frame of the block being gathered (the frame reader checked its stream). */
  continuation(payload: Buffer, flags: number): string[] | undefined {
    return this.#add(payload, flags);
  }

  #add(fragment: Buffer, flags: number): string[] | undefined {
    this.#size += fragment.byteLength;
    if (this.#size > OUR_MAX_HEADER_LIST_SIZE) {
      return this.#fail(
        PROTOCOL_ERROR,
        `a header block over ${OUR_MAX_HEADER_LIST_SIZE} bytes (our SETTINGS_MAX_HEADER_LIST_SIZE)`,
      );
    }
    if (++this.#frames > MAX_BLOCK_FRAMES) {
      return this.#fail(ENHANCE_YOUR_CALM, `a header block in over ${MAX_BLOCK_FRAMES} frames`);
    }
    if ((flags & FLAG_END_HEADERS) === 0) {
      // A copy: the frame is a view of the socket's read buffer, which the next read reuses.
      if (fragment.byteLength > 0) this.#parts.push(Buffer.from(fragment));
      return undefined;
    }
    const parts = this.#parts;
    const block = parts.length === 0 ? fragment : Buffer.concat([...parts, fragment]);
    this.#parts = [];
    this.#size = 0;
    this.#frames = 0;
    const fields = this.#fields;
    try {
      // Every block is decoded, even a closed stream's: the table must follow the server's.
      this.tooLarge = !this.#decoder.decode(block, this.#onField);
    } catch (error) {
      this.#fields = [];
      const text = error instanceof HpackError ? error.message : String(error);
      return this.#fail(COMPRESSION_ERROR, `a header block did not decode: ${text}`);
    }
    this.#fields = [];
    return fields;
  }

  #fail(code: number, text: string): undefined {
    this.errorCode = code;
    this.errorText = text;
    return undefined;
  }
}
