// gRPC's length-prefixed messages over an HTTP/2 stream: a 1-byte compressed flag, a 4-byte
// big-endian length, then the message (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md).

/** The 5-byte prefix of an uncompressed message of `length` bytes, written at `target[offset]`. */
export function writeFrameHeader(target: Uint8Array, offset: number, length: number): void {
  target[offset] = 0;
  target[offset + 1] = (length >>> 24) & 0xff;
  target[offset + 2] = (length >>> 16) & 0xff;
  target[offset + 3] = (length >>> 8) & 0xff;
  target[offset + 4] = length & 0xff;
}

/**
 * Where the first entry of length-delimited field `field` starts, read from the message's first
 * bytes; -1 if they do not reach it. The default, 6, is a ModelInferResponse's first
 * `raw_output_contents` entry (7 is a ModelInferRequest's first `raw_input_contents`): the fields
 * before it (names, parameters, tensor metadata) are small, so the first DATA frame normally holds them.
 */
export function firstRawOutputOffset(bytes: Uint8Array, end: number, field = RAW_OUTPUT_CONTENTS): number {
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) return -1;
      const byte = bytes[pos++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    return -1;
  };
  while (pos < end) {
    const key = varint();
    if (key < 0) return -1;
    const wireType = key % 8;
    const number = Math.floor(key / 8);
    if (wireType === 0) {
      if (varint() < 0) return -1;
    } else if (wireType === 1) pos += 8;
    else if (wireType === 5) pos += 4;
    else if (wireType === 2) {
      const length = varint();
      if (length < 0) return -1;
      if (number === field) return pos;
      pos += length;
    } else return -1;
  }
  return -1;
}

/** A ModelInferResponse's `raw_output_contents`. */
export const RAW_OUTPUT_CONTENTS = 6;
/** A ModelInferRequest's `raw_input_contents`. */
export const RAW_INPUT_CONTENTS = 7;

/**
 * Memory for a message of `length` bytes whose first `available` bytes are `first`, placed so that
 * the first entry of field `alignField` starts 8-byte aligned: the usual single-output response then
 * decodes into a typed array as a view, without the second copy an unaligned offset forces.
 */
export function messageMemory(
  first: Uint8Array,
  available: number,
  length: number,
  alignField = RAW_OUTPUT_CONTENTS,
  allocate: MessageAllocator = Buffer.allocUnsafe,
): Buffer {
  const rawOffset = firstRawOutputOffset(first, available, alignField);
  const backing = allocate(length + 8);
  const shift = rawOffset < 0 ? 0 : (8 - ((backing.byteOffset + rawOffset) % 8)) % 8;
  return backing.subarray(shift, shift + length);
}

/** Memory of at least `bytes` bytes (its contents undefined) for one message. */
export type MessageAllocator = (bytes: number) => Buffer;

/** Joins a message received in several DATA frames into one buffer, aligned as `messageMemory` says. */
export function assembleMessage(parts: readonly Uint8Array[], length: number): Buffer {
  const first = parts[0];
  const message = messageMemory(first ?? EMPTY, first?.byteLength ?? 0, length);
  let offset = 0;
  for (const part of parts) {
    const take = Math.min(part.byteLength, length - offset);
    message.set(take === part.byteLength ? part : part.subarray(0, take), offset);
    offset += take;
  }
  return message;
}

const EMPTY = Buffer.alloc(0);

/** Why a frame could not be read (the caller maps it to a gRPC status). */
export class FrameError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a `MessageReader` takes besides its limit. */
export interface MessageReaderOptions {
  /**
   * Messages flagged compressed (flag 1) are handed on as they are, with `compressed` true (a
   * server reads them so). Without it (a client, which never asks for compression) they are refused.
   * @default false
   */
  compressed?: boolean;
  /** The field whose first entry each message's memory aligns to 8 bytes. @default 6 (raw outputs) */
  alignField?: number;
  /**
   * Where each message's memory comes from. A server that knows when it is done with a request
   * (the reference server, once its answer is written) hands out recycled memory here; a client,
   * whose answers go to its caller, keeps the default.
   * @default Buffer.allocUnsafe (memory of its own per message)
   */
  allocate?: MessageAllocator;
}

/**
 * Splits the bytes of a gRPC stream into messages, however the chunks cut them: several messages in
 * one chunk, one message over many. A prefix announcing more than `maxBytes` is refused before any of
 * the message is kept. Each message is copied, as its bytes arrive, into memory of its own
 * (`messageMemory`), so the reader keeps no view of a chunk it was given: a chunk is valid only
 * during `push` (the client reads its socket into one reused buffer), and a server's read buffers
 * die young. The client's engine and the reference server (@infergate/testing) share it.
 */
export class MessageReader {
  readonly #onMessage: (message: Buffer, compressed: boolean) => void;
  readonly #maxBytes: number;
  readonly #acceptCompressed: boolean;
  readonly #alignField: number;
  readonly #allocate: MessageAllocator;
  /** A prefix cut between chunks is gathered here (made only then: most calls never need it). */
  #header: Buffer | undefined;
  #headerFilled = 0;
  #length = -1;
  #compressed = false;
  /** The message being received, made when its first byte arrives. */
  #message: Buffer | undefined;
  #received = 0;

  constructor(
    maxBytes: number,
    onMessage: (message: Buffer, compressed: boolean) => void,
    options: MessageReaderOptions = {},
  ) {
    this.#maxBytes = maxBytes;
    this.#onMessage = onMessage;
    this.#acceptCompressed = options.compressed === true;
    this.#alignField = options.alignField ?? RAW_OUTPUT_CONTENTS;
    this.#allocate = options.allocate ?? Buffer.allocUnsafe;
  }

  /** True between a message's first byte and its last. */
  get partial(): boolean {
    return this.#headerFilled > 0 || this.#length >= 0;
  }

  /** Throws `FrameError` on a prefix it refuses. */
  push(chunk: Buffer): void {
    let offset = 0;
    const size = chunk.byteLength;
    while (offset < size) {
      if (this.#length < 0) {
        // Fast path: the whole prefix is in this chunk.
        if (this.#headerFilled === 0 && size - offset >= 5) {
          this.#begin(chunk[offset] as number, chunk.readUInt32BE(offset + 1));
          offset += 5;
        } else {
          this.#header ??= Buffer.alloc(5);
          const header = this.#header;
          const take = Math.min(5 - this.#headerFilled, size - offset);
          chunk.copy(header, this.#headerFilled, offset, offset + take);
          this.#headerFilled += take;
          offset += take;
          if (this.#headerFilled < 5) return;
          this.#headerFilled = 0;
          this.#begin(header[0] as number, header.readUInt32BE(1));
        }
        if (this.#length === 0) {
          this.#finish(Buffer.alloc(0));
          continue;
        }
        if (offset === size) return;
      }
      const take = Math.min(this.#length - this.#received, size - offset);
      const piece = chunk.subarray(offset, offset + take);
      this.#message ??= messageMemory(piece, take, this.#length, this.#alignField, this.#allocate);
      this.#message.set(piece, this.#received);
      this.#received += take;
      offset += take;
      if (this.#received === this.#length) this.#finish(this.#message);
    }
  }

  #begin(flag: number, length: number): void {
    if (flag !== 0) {
      // A client never sends grpc-accept-encoding, so a compressed message is the server's mistake.
      if (!this.#acceptCompressed) {
        throw new FrameError(
          13,
          `the server sent a compressed message (flag ${flag}) that was not asked for`,
        );
      }
      if (flag !== 1) throw new FrameError(13, `invalid gRPC message flag ${flag}`);
    }
    if (length > this.#maxBytes) {
      throw new FrameError(8, `Received message larger than max (${length} vs. ${this.#maxBytes})`);
    }
    this.#compressed = flag === 1;
    this.#length = length;
    this.#received = 0;
  }

  #finish(message: Buffer): void {
    this.#length = -1;
    this.#received = 0;
    this.#message = undefined;
    this.#onMessage(message, this.#compressed);
  }
}

export { FrameReader, type FrameSink } from './h2-frame-reader.js';
// HTTP/2's own framing and header blocks, for the reference server's lean transport
// (@infergate/testing), which serves gRPC on a plain socket with this engine's frame code.
export * from './h2-frame-types.js';
export { HeaderBlockReader } from './h2-header-block-reader.js';
export { OUR_MAX_FRAME_SIZE, OUR_MAX_HEADER_LIST_SIZE } from './h2-settings.js';
