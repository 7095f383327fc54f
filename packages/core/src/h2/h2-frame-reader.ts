// Bytes from the socket into frames (RFC 9113, 4 and 6): the 9-byte frame head, whole payloads for
// control and header frames, and DATA handed on in pieces as it arrives (padding stripped), so a
// large answer is never gathered here. The framing rules that need no stream state are checked
// here too: the server's first frame is SETTINGS, no frame is over our size, and a header block's
// CONTINUATION frames follow it with nothing in between.
import {
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_PADDED,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_HEADERS,
  FRAME_SETTINGS,
  FRAME_SIZE_ERROR,
  PROTOCOL_ERROR,
} from './h2-frame-types.js';
import { OUR_MAX_FRAME_SIZE } from './h2-settings.js';

/** What the reader hands its frames to (the session's frame handler). */
export interface FrameSink {
  /** A whole frame other than DATA (a view of the chunk read, valid only during the call). */
  onFrame(type: number, flags: number, id: number, payload: Buffer): void;
  /** A DATA frame starts: `length` counts for flow control, padding included. */
  beginData(length: number, flags: number, id: number): void;
  /** A piece of the DATA frame's data, a view of the received chunk (valid only during the call). */
  onData(data: Buffer): void;
  /** The DATA frame is over (`flags` as in its head). */
  endData(flags: number): void;
  /** The bytes break HTTP/2's framing: the connection must end. */
  onFramingError(code: number, text: string): void;
}

const READ_HEAD = 0;
const READ_PAYLOAD = 1;
const READ_DATA = 2;

const EMPTY = Buffer.alloc(0);

export class FrameReader {
  readonly #sink: FrameSink;
  #stopped = false;
  #state = READ_HEAD;
  #sawFrame = false;
  readonly #head = Buffer.allocUnsafe(9);
  #headFill = 0;
  #length = 0;
  #type = 0;
  #flags = 0;
  #streamId = 0;
  #payload: Buffer | undefined;
  #payloadFill = 0;
  /** DATA being read: bytes of data and of padding left, and whether its pad length is still to come. */
  #dataLeft = 0;
  #padLeft = 0;
  #needPadLength = false;
  /** The stream whose header block waits for CONTINUATION (0: none). */
  #continuation = 0;

  constructor(sink: FrameSink) {
    this.#sink = sink;
  }

  /** Reads no more (the connection is over). */
  stop(): void {
    this.#stopped = true;
  }

  read(chunk: Buffer): void {
    let pos = 0;
    const end = chunk.byteLength;
    while (pos < end && !this.#stopped) {
      const state = this.#state;
      if (state === READ_HEAD) {
        let head: Buffer;
        let at: number;
        if (this.#headFill === 0 && end - pos >= 9) {
          head = chunk;
          at = pos;
          pos += 9;
        } else {
          const take = Math.min(9 - this.#headFill, end - pos);
          chunk.copy(this.#head, this.#headFill, pos, pos + take);
          this.#headFill += take;
          pos += take;
          if (this.#headFill < 9) return;
          this.#headFill = 0;
          head = this.#head;
          at = 0;
        }
        this.#beginFrame(
          ((head[at] as number) << 16) | ((head[at + 1] as number) << 8) | (head[at + 2] as number),
          head[at + 3] as number,
          head[at + 4] as number,
          head.readUInt32BE(at + 5) & 0x7fffffff,
          head,
          at,
        );
      } else if (state === READ_DATA) {
        pos = this.#readData(chunk, pos);
      } else {
        const length = this.#length;
        if (this.#payloadFill === 0 && end - pos >= length) {
          this.#state = READ_HEAD;
          this.#sink.onFrame(this.#type, this.#flags, this.#streamId, chunk.subarray(pos, pos + length));
          pos += length;
        } else {
          this.#payload ??= Buffer.allocUnsafe(length);
          const take = Math.min(length - this.#payloadFill, end - pos);
          chunk.copy(this.#payload, this.#payloadFill, pos, pos + take);
          this.#payloadFill += take;
          pos += take;
          if (this.#payloadFill < length) return;
          const payload = this.#payload;
          this.#payload = undefined;
          this.#payloadFill = 0;
          this.#state = READ_HEAD;
          this.#sink.onFrame(this.#type, this.#flags, this.#streamId, payload);
        }
      }
    }
  }

  #beginFrame(length: number, type: number, flags: number, id: number, head: Buffer, at: number): void {
    const sink = this.#sink;
    if (!this.#sawFrame) {
      this.#sawFrame = true;
      if (head.toString('latin1', at, at + 5) === 'HTTP/') {
        sink.onFramingError(PROTOCOL_ERROR, 'the server answered in HTTP/1, not HTTP/2');
        return;
      }
      if (type !== FRAME_SETTINGS || (flags & FLAG_ACK) !== 0) {
        sink.onFramingError(PROTOCOL_ERROR, `the server's first frame was type ${type}, not SETTINGS`);
        return;
      }
    }
    if (length > OUR_MAX_FRAME_SIZE) {
      sink.onFramingError(FRAME_SIZE_ERROR, `a frame of ${length} bytes is over our limit`);
      return;
    }
    if (this.#continuation !== 0) {
      if (type !== FRAME_CONTINUATION || id !== this.#continuation) {
        sink.onFramingError(PROTOCOL_ERROR, 'a header block was interrupted before END_HEADERS');
        return;
      }
      if ((flags & FLAG_END_HEADERS) !== 0) this.#continuation = 0;
    } else if (type === FRAME_CONTINUATION) {
      sink.onFramingError(PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
      return;
    } else if (type === FRAME_HEADERS && (flags & FLAG_END_HEADERS) === 0 && id !== 0) {
      this.#continuation = id;
    }
    this.#length = length;
    this.#type = type;
    this.#flags = flags;
    this.#streamId = id;
    if (type === FRAME_DATA) {
      this.#beginData(length, flags, id);
      return;
    }
    if (length === 0) {
      sink.onFrame(type, flags, id, EMPTY);
      return;
    }
    this.#state = READ_PAYLOAD;
  }

  #beginData(length: number, flags: number, id: number): void {
    this.#sink.beginData(length, flags, id);
    if (this.#stopped) return;
    this.#needPadLength = (flags & FLAG_PADDED) !== 0;
    this.#dataLeft = this.#needPadLength ? length - 1 : length;
    this.#padLeft = 0;
    if (this.#needPadLength && length === 0) {
      this.#sink.onFramingError(FRAME_SIZE_ERROR, 'a padded DATA frame without its pad length');
      return;
    }
    if (length === 0) {
      this.#sink.endData(flags);
      return;
    }
    this.#state = READ_DATA;
  }

  #readData(chunk: Buffer, start: number): number {
    let pos = start;
    const end = chunk.byteLength;
    if (this.#needPadLength) {
      this.#needPadLength = false;
      const pad = chunk[pos++] as number;
      if (pad > this.#dataLeft) {
        this.#sink.onFramingError(PROTOCOL_ERROR, 'DATA padding longer than the frame');
        return end;
      }
      this.#dataLeft -= pad;
      this.#padLeft = pad;
    }
    if (this.#dataLeft > 0 && pos < end) {
      const take = Math.min(this.#dataLeft, end - pos);
      this.#dataLeft -= take;
      this.#sink.onData(pos === 0 && take === end ? chunk : chunk.subarray(pos, pos + take));
      pos += take;
    }
    if (this.#dataLeft === 0 && this.#padLeft > 0 && pos < end) {
      const take = Math.min(this.#padLeft, end - pos);
      this.#padLeft -= take;
      pos += take;
    }
    if (this.#dataLeft === 0 && this.#padLeft === 0 && !this.#needPadLength) {
      this.#state = READ_HEAD;
      this.#sink.endData(this.#flags);
    }
    return pos;
  }
}
