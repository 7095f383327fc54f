import {
  FrameError,
  type MessageAllocator,
  MessageReader,
  RAW_INPUT_CONTENTS,
} from '@infergate/core/internal/grpc-frames';

/** A length-prefixed gRPC message: its compressed flag and its bytes (memory of its own). */
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
 * Splits a request body into gRPC messages with the client engine's reader (core's `MessageReader`:
 * however the DATA frames cut it, a prefix over `maxBytes` refused before anything is kept, each
 * message copied as it arrives into memory whose first `raw_input_contents` entry is 8-byte
 * aligned), taking compressed messages, and refusing with `FramingError`.
 */
export class GrpcMessageReader {
  readonly #reader: MessageReader;

  /** `allocate`: where each message's memory comes from (its own allocation by default). */
  constructor(maxBytes: number, onMessage: (message: RawMessage) => void, allocate?: MessageAllocator) {
    this.#reader = new MessageReader(maxBytes, (bytes, compressed) => onMessage({ compressed, bytes }), {
      compressed: true,
      alignField: RAW_INPUT_CONTENTS,
      ...(allocate === undefined ? {} : { allocate }),
    });
  }

  /** True between a message's first byte and its last. */
  get partial(): boolean {
    return this.#reader.partial;
  }

  /** Throws `FramingError` on a bad prefix. */
  push(chunk: Buffer): void {
    try {
      this.#reader.push(chunk);
    } catch (error) {
      if (error instanceof FrameError) throw new FramingError(error.status, error.message);
      throw error;
    }
  }
}
