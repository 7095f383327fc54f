// Sending a request: HEADERS (and CONTINUATION) then its body as DATA, within the server's stream
// and connection windows and frame size. The usual small request leaves as one buffer; a stream
// that runs out of window waits for WINDOW_UPDATE.
import {
  DEFAULT_WINDOW,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_HEADERS,
  MAX_WINDOW,
  writeFrameHead,
} from './h2-frame-types.js';
import type { FrameWriter } from './h2-frame-writer.js';
import type { RequestHeaders } from './h2-request-headers.js';
import type { PeerSettings } from './h2-settings.js';
import { type SessionStream, STATE_OPEN } from './h2-stream.js';

/** A request of at most this many bytes (frames included) goes out as one buffer; a larger one uncopied. */
const COALESCE_LIMIT = 32 * 1024;

export class RequestSender {
  readonly #writer: FrameWriter;
  readonly #peer: PeerSettings;
  readonly #headers: RequestHeaders;
  /** The connection's send window. */
  #window = DEFAULT_WINDOW;
  /** Streams with DATA to send once the connection window grows. */
  #blocked: SessionStream[] = [];

  constructor(writer: FrameWriter, peer: PeerSettings, headers: RequestHeaders) {
    this.#writer = writer;
    this.#peer = peer;
    this.#headers = headers;
  }

  /**
   * Sends an open stream's request: HEADERS, and as much of the body as the windows allow. `alone`:
   * no other stream is open on the connection, so a request that fits one buffer is written at once
   * instead of waiting for the turn's other writes (see `FrameWriter.writeAlone`).
   */
  send(stream: SessionStream, alone = false): void {
    const requestHeaders = this.#headers;
    const head = requestHeaders.encode(stream);
    const tail = requestHeaders.tail;
    requestHeaders.tail = undefined;
    const blockLength = head.byteLength + (tail === undefined ? 0 : tail.byteLength);
    const endStream = stream.remaining === 0;
    const maxFrame = this.#peer.maxFrame;
    // The usual request: HEADERS fits one frame and the body is small: one buffer, one write.
    const dataLength = Math.min(stream.remaining, stream.sendWindow, this.#window, maxFrame);
    if (
      blockLength <= maxFrame &&
      dataLength === stream.remaining &&
      18 + blockLength + dataLength <= COALESCE_LIMIT
    ) {
      const out = Buffer.allocUnsafe(9 + blockLength + (endStream ? 0 : 9 + dataLength));
      writeFrameHead(
        out,
        0,
        blockLength,
        FRAME_HEADERS,
        FLAG_END_HEADERS | (endStream ? FLAG_END_STREAM : 0),
        stream.id,
      );
      out.set(head, 9);
      if (tail !== undefined) out.set(tail, 9 + head.byteLength);
      if (!endStream) {
        let at = 9 + blockLength;
        writeFrameHead(out, at, dataLength, FRAME_DATA, FLAG_END_STREAM, stream.id);
        at += 9;
        for (const chunk of stream.body) {
          out.set(chunk, at);
          at += chunk.byteLength;
        }
        stream.remaining = 0;
        stream.sendWindow -= dataLength;
        this.#window -= dataLength;
        stream.body = [];
      }
      stream.localEnded = true;
      if (alone) this.#writer.writeAlone(out);
      else this.#writer.write(out);
      return;
    }
    const batch = this.#writer.beginBatch();
    this.#writeHeaders(stream.id, tail === undefined ? head : Buffer.concat([head, tail]), endStream);
    if (endStream) stream.localEnded = true;
    else this.#sendData(stream);
    if (batch) this.#writer.endBatch();
  }

  /** The stream's window grew (or the server's initial window did): sends what it now allows. */
  resume(stream: SessionStream): void {
    if (stream.state !== STATE_OPEN || stream.remaining === 0 || stream.blocked) return;
    const batch = this.#writer.beginBatch();
    this.#sendData(stream);
    if (batch) this.#writer.endBatch();
  }

  /** A connection WINDOW_UPDATE: false if the window went over 2^31-1. */
  growConnectionWindow(increment: number): boolean {
    this.#window += increment;
    if (this.#window > MAX_WINDOW) return false;
    const blocked = this.#blocked;
    this.#blocked = [];
    for (const stream of blocked) {
      stream.blocked = false;
      this.resume(stream);
    }
    return true;
  }

  /** The connection is over: no stream waits for its window any more. */
  clear(): void {
    this.#blocked = [];
  }

  #writeHeaders(id: number, block: Buffer, endStream: boolean): void {
    const maxFrame = this.#peer.maxFrame;
    let offset = 0;
    let type = FRAME_HEADERS;
    do {
      const length = Math.min(maxFrame, block.byteLength - offset);
      const last = offset + length === block.byteLength;
      let flags = last ? FLAG_END_HEADERS : 0;
      if (type === FRAME_HEADERS && endStream) flags |= FLAG_END_STREAM;
      const out = Buffer.allocUnsafe(9 + length);
      writeFrameHead(out, 0, length, type, flags, id);
      block.copy(out, 9, offset, offset + length);
      this.#writer.write(out);
      offset += length;
      type = FRAME_CONTINUATION;
    } while (offset < block.byteLength);
  }

  /** Sends as much of the stream's body as the windows allow; waits for WINDOW_UPDATE for the rest. */
  #sendData(stream: SessionStream): void {
    const maxFrame = this.#peer.maxFrame;
    const writer = this.#writer;
    while (stream.remaining > 0) {
      const allowed = Math.min(stream.sendWindow, this.#window, maxFrame, stream.remaining);
      if (allowed <= 0) {
        // Blocked by the connection window (only one list entry per stream): WINDOW_UPDATE on
        // stream 0 resumes it; blocked by its own window, its own WINDOW_UPDATE does.
        if (this.#window <= 0 && stream.sendWindow > 0 && !stream.blocked) {
          stream.blocked = true;
          this.#blocked.push(stream);
        }
        return;
      }
      stream.remaining -= allowed;
      stream.sendWindow -= allowed;
      this.#window -= allowed;
      const end = stream.remaining === 0;
      const head = Buffer.allocUnsafe(9);
      writeFrameHead(head, 0, allowed, FRAME_DATA, end ? FLAG_END_STREAM : 0, stream.id);
      writer.write(head);
      let left = allowed;
      while (left > 0) {
        const chunk = stream.body[stream.chunk] as Uint8Array;
        const available = chunk.byteLength - stream.offset;
        if (available === 0) {
          stream.chunk++;
          stream.offset = 0;
          continue;
        }
        const take = Math.min(available, left);
        writer.write(take === chunk.byteLength ? chunk : chunk.subarray(stream.offset, stream.offset + take));
        stream.offset += take;
        left -= take;
      }
      if (end) {
        stream.localEnded = true;
        stream.body = [];
      }
    }
  }
}
