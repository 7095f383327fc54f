import { status } from './grpc-status.js';

/** A length-prefixed gRPC message: its compressed flag and its bytes (a view, not a copy, when it can be). */
export interface RawMessage {
  readonly compressed: boolean;
  readonly bytes: Buffer;
}

/** A request body the framing refuses; `code` is the gRPC status to answer with. */
export class FramingError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Splits a request body into gRPC messages (1 flag byte, 4 length bytes, the message), however the
 * DATA frames cut it: several messages in one chunk, or one message over many. A message whose
 * prefix announces more than `maxBytes` is refused before any of it is buffered, so one stream
 * buffers at most one partial message of at most `maxBytes`.
 */
export class GrpcMessageReader {
  readonly #maxBytes: number;
  readonly #onMessage: (message: RawMessage) => void;
  #header: Buffer | undefined;
  #headerFilled = 0;
  /** The length of the message being read; -1 between messages. */
  #length = -1;
  #compressed = false;
  #parts: Buffer[] = [];
  #received = 0;

  constructor(maxBytes: number, onMessage: (message: RawMessage) => void) {
    this.#maxBytes = maxBytes;
    this.#onMessage = onMessage;
  }

  /** True between a message's first byte and its last. */
  get partial(): boolean {
    return this.#headerFilled > 0 || this.#length >= 0;
  }

  /** Throws `FramingError` on a bad prefix. */
  push(chunk: Buffer): void {
    let offset = 0;
    const size = chunk.byteLength;
    while (offset < size) {
      if (this.#length < 0) {
        if (this.#headerFilled === 0 && size - offset >= 5) {
          this.#begin(chunk[offset] as number, chunk.readUInt32BE(offset + 1));
          offset += 5;
        } else {
          this.#header ??= Buffer.alloc(5);
          const take = Math.min(5 - this.#headerFilled, size - offset);
          chunk.copy(this.#header, this.#headerFilled, offset, offset + take);
          this.#headerFilled += take;
          offset += take;
          if (this.#headerFilled < 5) return;
          this.#headerFilled = 0;
          this.#begin(this.#header[0] as number, this.#header.readUInt32BE(1));
        }
        if (this.#length === 0) {
          this.#finish(Buffer.alloc(0));
          continue;
        }
      }
      const wanted = this.#length - this.#received;
      const available = size - offset;
      if (this.#received === 0 && available >= wanted) {
        this.#finish(chunk.subarray(offset, offset + wanted));
        offset += wanted;
        continue;
      }
      const take = Math.min(wanted, available);
      this.#parts.push(chunk.subarray(offset, offset + take));
      this.#received += take;
      offset += take;
      if (this.#received === this.#length) {
        const whole = Buffer.concat(this.#parts, this.#length);
        this.#parts = [];
        this.#finish(whole);
      }
    }
  }

  #begin(flag: number, length: number): void {
    if (flag > 1) throw new FramingError(status.INTERNAL, `invalid gRPC message flag ${flag}`);
    if (length > this.#maxBytes) {
      throw new FramingError(
        status.RESOURCE_EXHAUSTED,
        `Received message larger than max (${length} vs. ${this.#maxBytes})`,
      );
    }
    this.#compressed = flag === 1;
    this.#length = length;
    this.#received = 0;
  }

  #finish(bytes: Buffer): void {
    this.#length = -1;
    this.#received = 0;
    this.#onMessage({ compressed: this.#compressed, bytes });
  }
}
