// What one connection of the lean gRPC transport writes (h2-grpc-lean-session.ts reads): frames
// written in one socket write per turn of JavaScript, bounded against a client that does not read,
// and the send side of flow control — DATA only as far as the connection's and the stream's windows
// allow, at the peer's frame size, the rest held per stream until a WINDOW_UPDATE makes room.
import type { Socket } from 'node:net';
import {
  DEFAULT_WINDOW,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_HEADERS,
  FRAME_RST_STREAM,
  frame,
  frame32,
  MAX_WINDOW,
  NO_ERROR,
} from '@infergate/core/internal/grpc-frames';
import { DEFAULT_MAX_FRAME, frameHead } from './h2-grpc-lean-frames.js';
import type { PreparedReply } from './h2-grpc-lean-prepared-reply.js';
import type { LeanStream } from './h2-grpc-lean-stream.js';

/**
 * The most PING and SETTINGS acknowledgements that may wait to reach the kernel: a client that keeps
 * asking while it does not read gets GOAWAY ENHANCE_YOUR_CALM instead of a growing write buffer
 * (core's client holds its answers to the same number).
 */
export const MAX_UNFLUSHED_ANSWERS = 1000;
/**
 * The most bytes the socket may hold unwritten. What a client can make us buffer is bounded by its
 * flow-control windows for DATA, not for header blocks: a client that opens stream after stream and
 * never reads is dropped here.
 */
export const MAX_UNWRITTEN_BYTES = 256 << 20;

/** One connection's writes and send windows. */
export class LeanSender {
  readonly #socket: Socket;
  /** The session forgets a stream whose answer is out (its END_STREAM written), and `drop`s it. */
  readonly #answered: (stream: LeanStream) => void;
  #over = false;
  #corked = false;
  readonly #uncork = () => {
    this.#corked = false;
    if (!this.#socket.destroyed) this.#socket.uncork();
  };
  #unflushedAnswers = 0;
  readonly #answerFlushed = () => {
    this.#unflushedAnswers--;
  };
  /** The peer's SETTINGS_MAX_FRAME_SIZE. */
  peerMaxFrame = DEFAULT_MAX_FRAME;
  /** Bytes we may still send on the connection. */
  #sendWindow = DEFAULT_WINDOW;
  /** Streams with frames held by a send window. */
  readonly #blocked = new Set<LeanStream>();

  constructor(socket: Socket, answered: (stream: LeanStream) => void) {
    this.#socket = socket;
    this.#answered = answered;
  }

  /** Nothing more is written: the connection is over (or being closed). */
  get over(): boolean {
    return this.#over;
  }

  stop(): void {
    this.#over = true;
  }

  write(buffer: Buffer, flushed?: (error?: Error | null) => void): void {
    if (this.#over || this.#socket.destroyed) return;
    if (this.#socket.writableLength > MAX_UNWRITTEN_BYTES) {
      // The client does not read what it asks for.
      this.#over = true;
      this.#socket.destroy();
      return;
    }
    // Everything written in one turn of JavaScript (an answer's HEADERS, DATA and trailers, the
    // acknowledgements of one read) leaves in one write, once the microtasks are done.
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      queueMicrotask(this.#uncork);
    }
    this.#socket.write(buffer, flushed);
  }

  /**
   * An acknowledgement the client asked for (PING, SETTINGS); false, and nothing written, when
   * MAX_UNFLUSHED_ANSWERS earlier ones have not reached the kernel yet.
   */
  answer(buffer: Buffer): boolean {
    if (this.#unflushedAnswers >= MAX_UNFLUSHED_ANSWERS) return false;
    this.#unflushedAnswers++;
    this.write(buffer, this.#answerFlushed);
    return true;
  }

  /** What this turn wrote leaves now, not after the rest of the turn's microtasks. */
  flush(): void {
    this.#uncork();
  }

  rst(id: number, code: number): void {
    this.write(frame32(FRAME_RST_STREAM, id, code));
  }

  /**
   * A header block as HEADERS (and CONTINUATION when over the peer's frame size); `flushed` once its
   * last frame, and so everything written before it, reached the kernel.
   */
  headers(id: number, block: Buffer, endStream: boolean, flushed?: (error?: Error | null) => void): void {
    const max = this.peerMaxFrame;
    const endFlag = endStream ? FLAG_END_STREAM : 0;
    if (block.byteLength <= max) {
      this.write(frame(FRAME_HEADERS, FLAG_END_HEADERS | endFlag, id, block), flushed);
      return;
    }
    this.write(frame(FRAME_HEADERS, endFlag, id, block.subarray(0, max)));
    for (let at = max; at < block.byteLength; at += max) {
      const last = at + max >= block.byteLength;
      const next = frame(FRAME_CONTINUATION, last ? FLAG_END_HEADERS : 0, id, block.subarray(at, at + max));
      this.write(next, last ? flushed : undefined);
    }
  }

  /**
   * Writes a prepared answer for `stream` and flushes it at once; false (nothing written) if the
   * send windows no longer hold it, the peer's frame size changed or the stream has frames waiting.
   */
  writePrepared(stream: LeanStream, prepared: PreparedReply, written?: () => void): boolean {
    if (
      stream.closed ||
      stream.pending.length > 0 ||
      stream.pendingTrailers !== undefined ||
      prepared.maxFrame !== this.peerMaxFrame ||
      prepared.bytes > this.#sendWindow ||
      prepared.bytes > stream.sendWindow
    ) {
      return false;
    }
    this.#sendWindow -= prepared.bytes;
    stream.sendWindow -= prepared.bytes;
    const frames = prepared.frames;
    const last = frames.length - 1;
    for (let i = 0; i < last; i++) this.write(frames[i] as Buffer);
    this.write(frames[last] as Buffer, written === undefined ? undefined : writtenCallback(written));
    stream.closed = true;
    if (!stream.requestEnded && !stream.endsWithHeaders) this.rst(stream.id, NO_ERROR);
    // The answer is the end's work: it leaves now, not after the rest of this turn's microtasks.
    if (this.#corked) this.#uncork();
    this.#answered(stream);
    return true;
  }

  /** Sends what `stream` holds as far as the send windows allow; its status once the data is out. */
  pump(stream: LeanStream): void {
    if (stream.closed) return;
    const pending = stream.pending;
    while (pending.length > 0) {
      const chunk = pending[0] as Buffer;
      const room = Math.min(this.#sendWindow, stream.sendWindow, this.peerMaxFrame);
      if (chunk.byteLength > 0 && room <= 0) {
        this.#blocked.add(stream);
        return;
      }
      const take = Math.min(room, chunk.byteLength);
      this.write(frameHead(take, FRAME_DATA, 0, stream.id));
      if (take > 0) this.write(take === chunk.byteLength ? chunk : chunk.subarray(0, take));
      this.#sendWindow -= take;
      stream.sendWindow -= take;
      if (take === chunk.byteLength) pending.shift();
      else pending[0] = chunk.subarray(take);
    }
    this.#blocked.delete(stream);
    const trailers = stream.pendingTrailers;
    if (trailers === undefined) return;
    stream.pendingTrailers = undefined;
    const written = stream.written;
    stream.written = undefined;
    this.headers(stream.id, trailers, true, written === undefined ? undefined : writtenCallback(written));
    stream.closed = true;
    // A complete answer before the request's end: the client may stop sending (RFC 9113, 8.1).
    if (!stream.requestEnded && !stream.endsWithHeaders) this.rst(stream.id, NO_ERROR);
    this.#answered(stream);
  }

  /** The blocked streams' held frames, as far as the connection's window now allows. */
  pumpBlocked(): void {
    for (const stream of [...this.#blocked]) {
      if (this.#sendWindow <= 0) return;
      this.pump(stream);
    }
  }

  /** The connection's send window grew by `increment`; false if that took it over 2^31-1. */
  connectionWindowUpdate(increment: number): boolean {
    this.#sendWindow += increment;
    if (this.#sendWindow > MAX_WINDOW) return false;
    this.pumpBlocked();
    return true;
  }

  /** `stream`'s send window grew (its `sendWindow` already raised): what it held goes out. */
  streamWindowUpdated(stream: LeanStream): void {
    if (this.#blocked.has(stream)) this.pump(stream);
  }

  /** `stream` is gone (reset): nothing it held is sent. */
  drop(stream: LeanStream): void {
    this.#blocked.delete(stream);
  }

  dropAll(): void {
    this.#blocked.clear();
  }
}

/** A socket write's callback that calls `written` only when the write succeeded. */
function writtenCallback(written: () => void): (error?: Error | null) => void {
  return (error) => {
    if (error === undefined || error === null) written();
  };
}
