// One HTTP/2 connection of the lean gRPC transport: the client's preface and frames read with core's
// frame reader and HPACK decoder, the answers written by hand. What it keeps per connection and per
// stream is what gRPC needs and RFC 9113 requires of a server: SETTINGS (acknowledged, the peer's
// window and frame size applied), PING answered, both directions' flow control, RST_STREAM and
// GOAWAY, a cap on open streams. A unary answer's HEADERS, DATA and trailers leave in one write.
import type { Socket } from 'node:net';
import {
  DEFAULT_WINDOW,
  ENHANCE_YOUR_CALM,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLOW_CONTROL_ERROR,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_GOAWAY,
  FRAME_HEADERS,
  FRAME_PING,
  FRAME_PRIORITY,
  FRAME_PUSH_PROMISE,
  FRAME_RST_STREAM,
  FRAME_SETTINGS,
  FRAME_SIZE_ERROR,
  FRAME_WINDOW_UPDATE,
  FrameReader,
  type FrameSink,
  frame,
  HeaderBlockReader,
  MAX_MAX_FRAME_SIZE,
  MAX_WINDOW,
  MIN_MAX_FRAME_SIZE,
  NO_ERROR,
  PREFACE,
  PROTOCOL_ERROR,
  REFUSED_STREAM,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  STREAM_CLOSED,
} from '@infergate/core/internal/grpc-frames';
import type { H2ServeContext } from './h2-grpc-call.js';
import { serveGrpcCall } from './h2-grpc-call.js';
import {
  DEFAULT_MAX_FRAME,
  frameHead,
  OK_TRAILERS_BLOCK,
  RESPONSE_BLOCK,
  UNSUPPORTED_MEDIA_BLOCK,
} from './h2-grpc-lean-frames.js';
import { LeanStream } from './h2-grpc-lean-stream.js';

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

/** The transport's limits (the same as the node:http2 transport's). */
export interface LeanLimits {
  maxConcurrentStreams: number;
  streamWindow: number;
  sessionWindow: number;
  /** Our SETTINGS_MAX_FRAME_SIZE: core's frame reader refuses frames over it. */
  maxFrameSize: number;
}

const noop = () => {};

/** A unary answer's frames, built before its execution ended (`prepareReply`). */
export interface PreparedReply {
  readonly frames: readonly Buffer[];
  /** Its DATA frames' payload, what the send windows must hold. */
  readonly bytes: number;
  /** The peer's frame size it was split at. */
  readonly maxFrame: number;
}

/** One connection (plain or TLS socket, after ALPN). */
export class LeanSession implements FrameSink {
  readonly #socket: Socket;
  readonly #context: H2ServeContext;
  readonly #limits: LeanLimits;
  readonly #reader: FrameReader;
  readonly #blocks = new HeaderBlockReader();
  readonly #streams = new Map<number, LeanStream>();
  #prefaceSeen = 0;
  #lastStreamId = 0;
  #goingAway = false;
  #over = false;
  /** The peer's settings that matter here. */
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = DEFAULT_MAX_FRAME;
  /** Bytes we may still send on the connection. */
  #sendWindow = DEFAULT_WINDOW;
  /** Bytes the client may still send, and what it sent that we have not given back yet. */
  #receiveWindow: number;
  #unacked = 0;
  /** Streams with frames held by a send window. */
  readonly #blocked = new Set<LeanStream>();
  /** The stream the DATA frame being read belongs to (undefined: none, or one we drop). */
  #dataStream: LeanStream | undefined;
  #corked = false;
  readonly #uncork = () => {
    this.#corked = false;
    if (!this.#socket.destroyed) this.#socket.uncork();
  };
  /** Called once the connection is over (socket closed). */
  onClose: () => void = noop;

  constructor(socket: Socket, context: H2ServeContext, limits: LeanLimits) {
    this.#socket = socket;
    this.#context = context;
    this.#limits = limits;
    this.#receiveWindow = limits.sessionWindow;
    this.#reader = new FrameReader(this);
    socket.setNoDelay(true);
    socket.on('error', noop);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.once('close', () => this.#closed());
    const settings = Buffer.allocUnsafe(18);
    settings.writeUInt16BE(SETTINGS_MAX_CONCURRENT_STREAMS, 0);
    settings.writeUInt32BE(limits.maxConcurrentStreams, 2);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 6);
    settings.writeUInt32BE(limits.streamWindow, 8);
    settings.writeUInt16BE(SETTINGS_MAX_FRAME_SIZE, 12);
    settings.writeUInt32BE(limits.maxFrameSize, 14);
    this.#write(frame(FRAME_SETTINGS, 0, 0, settings));
    if (limits.sessionWindow > DEFAULT_WINDOW) {
      this.#write(this.#windowUpdate(0, limits.sessionWindow - DEFAULT_WINDOW));
    }
  }

  /** No new streams (GOAWAY); the connection ends once the open ones are done. */
  goAway(): void {
    if (this.#goingAway || this.#over) return;
    this.#goingAway = true;
    this.#write(this.#goAwayFrame(NO_ERROR, ''));
    this.#endIfIdle();
  }

  /** Drops the connection at once (clients see it lost). */
  destroy(): void {
    this.#socket.destroy();
  }

  // --- writing ---

  #unflushedAnswers = 0;
  readonly #answerFlushed = () => {
    this.#unflushedAnswers--;
  };

  /** An acknowledgement the client asked for (PING, SETTINGS), bounded by MAX_UNFLUSHED_ANSWERS. */
  #answer(buffer: Buffer): void {
    if (this.#unflushedAnswers >= MAX_UNFLUSHED_ANSWERS) {
      this.#connectionError(ENHANCE_YOUR_CALM, 'too many PING or SETTINGS frames left unread');
      return;
    }
    this.#unflushedAnswers++;
    this.#write(buffer, this.#answerFlushed);
  }

  #write(buffer: Buffer, flushed?: () => void): void {
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

  #windowUpdate(id: number, increment: number): Buffer {
    const payload = Buffer.allocUnsafe(4);
    payload.writeUInt32BE(increment, 0);
    return frame(FRAME_WINDOW_UPDATE, 0, id, payload);
  }

  #goAwayFrame(code: number, text: string): Buffer {
    const debug = Buffer.from(text, 'utf8');
    const payload = Buffer.allocUnsafe(8 + debug.byteLength);
    payload.writeUInt32BE(this.#lastStreamId, 0);
    payload.writeUInt32BE(code, 4);
    debug.copy(payload, 8);
    return frame(FRAME_GOAWAY, 0, 0, payload);
  }

  #rst(id: number, code: number): void {
    const payload = Buffer.allocUnsafe(4);
    payload.writeUInt32BE(code, 0);
    this.#write(frame(FRAME_RST_STREAM, 0, id, payload));
  }

  /** A header block as HEADERS (and CONTINUATION when over the peer's frame size). */
  headers(id: number, block: Buffer, endStream: boolean): void {
    const max = this.#peerMaxFrame;
    const endFlag = endStream ? FLAG_END_STREAM : 0;
    if (block.byteLength <= max) {
      this.#write(frame(FRAME_HEADERS, FLAG_END_HEADERS | endFlag, id, block));
      return;
    }
    this.#write(frame(FRAME_HEADERS, endFlag, id, block.subarray(0, max)));
    for (let at = max; at < block.byteLength; at += max) {
      const last = at + max >= block.byteLength;
      this.#write(frame(FRAME_CONTINUATION, last ? FLAG_END_HEADERS : 0, id, block.subarray(at, at + max)));
    }
  }

  /**
   * A unary answer's frames, built ahead of its write (decision 0023): HEADERS, the message as DATA
   * frames at the peer's frame size, trailers. Undefined if its header blocks need CONTINUATION.
   */
  prepareReply(id: number, chunks: readonly Buffer[]): PreparedReply | undefined {
    const max = this.#peerMaxFrame;
    if (RESPONSE_BLOCK.byteLength > max || OK_TRAILERS_BLOCK.byteLength > max) return undefined;
    const frames: Buffer[] = [frame(FRAME_HEADERS, FLAG_END_HEADERS, id, RESPONSE_BLOCK)];
    let bytes = 0;
    for (const chunk of chunks) {
      for (let at = 0; at < chunk.byteLength; at += max) {
        const piece = at === 0 && chunk.byteLength <= max ? chunk : chunk.subarray(at, at + max);
        frames.push(frameHead(piece.byteLength, FRAME_DATA, 0, id), piece);
        bytes += piece.byteLength;
      }
    }
    frames.push(frame(FRAME_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, id, OK_TRAILERS_BLOCK));
    return { frames, bytes, maxFrame: max };
  }

  /**
   * Writes a prepared answer for `stream` and flushes it at once; false (nothing written) if the
   * send windows no longer hold it, the peer's frame size changed or the stream has frames waiting.
   */
  writePrepared(stream: LeanStream, prepared: PreparedReply): boolean {
    if (
      stream.closed ||
      stream.pending.length > 0 ||
      stream.pendingTrailers !== undefined ||
      prepared.maxFrame !== this.#peerMaxFrame ||
      prepared.bytes > this.#sendWindow ||
      prepared.bytes > stream.sendWindow
    ) {
      return false;
    }
    this.#sendWindow -= prepared.bytes;
    stream.sendWindow -= prepared.bytes;
    for (const buffer of prepared.frames) this.#write(buffer);
    stream.closed = true;
    if (!stream.requestEnded && !stream.endsWithHeaders) this.#rst(stream.id, NO_ERROR);
    // The answer is the end's work: it leaves now, not after the rest of this turn's microtasks.
    if (this.#corked) this.#uncork();
    this.#forget(stream);
    return true;
  }

  /** Sends what `stream` holds as far as the send windows allow; its status once the data is out. */
  pump(stream: LeanStream): void {
    if (stream.closed) return;
    const pending = stream.pending;
    while (pending.length > 0) {
      const chunk = pending[0] as Buffer;
      const room = Math.min(this.#sendWindow, stream.sendWindow, this.#peerMaxFrame);
      if (chunk.byteLength > 0 && room <= 0) {
        this.#blocked.add(stream);
        return;
      }
      const take = Math.min(room, chunk.byteLength);
      this.#write(frameHead(take, FRAME_DATA, 0, stream.id));
      if (take > 0) this.#write(take === chunk.byteLength ? chunk : chunk.subarray(0, take));
      this.#sendWindow -= take;
      stream.sendWindow -= take;
      if (take === chunk.byteLength) pending.shift();
      else pending[0] = chunk.subarray(take);
    }
    this.#blocked.delete(stream);
    const trailers = stream.pendingTrailers;
    if (trailers === undefined) return;
    stream.pendingTrailers = undefined;
    this.headers(stream.id, trailers, true);
    stream.closed = true;
    // A complete answer before the request's end: the client may stop sending (RFC 9113, 8.1).
    if (!stream.requestEnded && !stream.endsWithHeaders) this.#rst(stream.id, NO_ERROR);
    this.#forget(stream);
  }

  #pumpBlocked(): void {
    for (const stream of [...this.#blocked]) {
      if (this.#sendWindow <= 0) return;
      this.pump(stream);
    }
  }

  #forget(stream: LeanStream): void {
    this.#streams.delete(stream.id);
    this.#blocked.delete(stream);
    this.#endIfIdle();
  }

  #endIfIdle(): void {
    if (this.#goingAway && this.#streams.size === 0 && !this.#over) {
      this.#socket.end();
    }
  }

  // --- reading ---

  #read(chunk: Buffer): void {
    if (this.#over) return;
    let data = chunk;
    if (this.#prefaceSeen < PREFACE.byteLength) {
      const take = Math.min(PREFACE.byteLength - this.#prefaceSeen, data.byteLength);
      if (!data.subarray(0, take).equals(PREFACE.subarray(this.#prefaceSeen, this.#prefaceSeen + take))) {
        this.#socket.destroy();
        return;
      }
      this.#prefaceSeen += take;
      if (take === data.byteLength) return;
      data = data.subarray(take);
    }
    this.#reader.read(data);
  }

  onFramingError(code: number, text: string): void {
    this.#connectionError(code, text);
  }

  #connectionError(code: number, text: string): void {
    if (this.#over) return;
    this.#reader.stop();
    this.#write(this.#goAwayFrame(code, text));
    this.#uncork();
    this.#over = true;
    this.#socket.end();
    for (const stream of this.#streams.values()) stream.reset();
    this.#streams.clear();
  }

  onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    switch (type) {
      case FRAME_HEADERS:
        if (id === 0) {
          this.#connectionError(PROTOCOL_ERROR, 'HEADERS on stream 0');
          return;
        }
        {
          this.#headerBlock(this.#blocks.headers(payload, flags, id));
          return;
        }
      case FRAME_CONTINUATION: {
        this.#headerBlock(this.#blocks.continuation(payload, flags));
        return;
      }
      case FRAME_SETTINGS: {
        this.#settings(flags, id, payload);
        return;
      }
      case FRAME_PING:
        if (id !== 0) {
          this.#connectionError(PROTOCOL_ERROR, 'PING on a stream');
          return;
        }
        if (payload.byteLength !== 8) {
          this.#connectionError(FRAME_SIZE_ERROR, 'PING of the wrong size');
          return;
        }
        if ((flags & FLAG_ACK) === 0) this.#answer(frame(FRAME_PING, FLAG_ACK, 0, payload));
        return;
      case FRAME_WINDOW_UPDATE: {
        this.#windowUpdateReceived(id, payload);
        return;
      }
      case FRAME_RST_STREAM: {
        if (id === 0) {
          this.#connectionError(PROTOCOL_ERROR, 'RST_STREAM on stream 0');
          return;
        }
        const stream = this.#streams.get(id);
        if (stream === undefined) return;
        this.#streams.delete(id);
        this.#blocked.delete(stream);
        stream.reset();
        this.#endIfIdle();
        return;
      }
      case FRAME_GOAWAY:
        // The client opens no more streams; the open ones finish.
        return;
      case FRAME_PUSH_PROMISE: {
        this.#connectionError(PROTOCOL_ERROR, 'a client sent PUSH_PROMISE');
        return;
      }
      case FRAME_PRIORITY:
        return;
      default:
        // Unknown frame types are ignored (RFC 9113, 4.1).
        return;
    }
  }

  #settings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) {
      this.#connectionError(PROTOCOL_ERROR, 'SETTINGS on a stream');
      return;
    }
    if ((flags & FLAG_ACK) !== 0) return;
    if (payload.byteLength % 6 !== 0) {
      this.#connectionError(FRAME_SIZE_ERROR, 'SETTINGS of a wrong size');
      return;
    }
    for (let at = 0; at < payload.byteLength; at += 6) {
      const key = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (key === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) {
          this.#connectionError(FLOW_CONTROL_ERROR, 'initial window over 2^31-1');
          return;
        }
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const stream of this.#streams.values()) stream.sendWindow += delta;
      } else if (key === SETTINGS_MAX_FRAME_SIZE) {
        if (value < MIN_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE) {
          this.#connectionError(PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
          return;
        }
        this.#peerMaxFrame = value;
      } else if (key === SETTINGS_ENABLE_PUSH && value > 1) {
        this.#connectionError(PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH not 0 or 1');
        return;
      }
    }
    this.#answer(frame(FRAME_SETTINGS, FLAG_ACK, 0, Buffer.alloc(0)));
    this.#pumpBlocked();
  }

  #windowUpdateReceived(id: number, payload: Buffer): void {
    if (payload.byteLength !== 4) {
      this.#connectionError(FRAME_SIZE_ERROR, 'WINDOW_UPDATE of a wrong size');
      return;
    }
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) {
        this.#connectionError(PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
        return;
      }
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) {
        this.#connectionError(FLOW_CONTROL_ERROR, 'window over 2^31-1');
        return;
      }
      this.#pumpBlocked();
      return;
    }
    const stream = this.#streams.get(id);
    if (stream === undefined) return;
    if (increment === 0 || stream.sendWindow + increment > MAX_WINDOW) {
      this.#resetStream(stream, increment === 0 ? PROTOCOL_ERROR : FLOW_CONTROL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    if (this.#blocked.has(stream)) this.pump(stream);
  }

  /** Ends `stream` with RST_STREAM `code`; the call is cancelled. */
  #resetStream(stream: LeanStream, code: number): void {
    this.#rst(stream.id, code);
    this.#streams.delete(stream.id);
    this.#blocked.delete(stream);
    stream.reset();
    this.#endIfIdle();
  }

  #headerBlock(fields: string[] | undefined): void {
    const blocks = this.#blocks;
    if (fields === undefined) {
      if (blocks.errorCode !== 0) this.#connectionError(blocks.errorCode, blocks.errorText);
      return;
    }
    const id = blocks.streamId;
    const endStream = blocks.endStream;
    const known = this.#streams.get(id);
    if (known !== undefined) {
      // Trailers from the client: they must end the stream.
      if (!endStream || known.requestEnded) {
        this.#resetStream(known, PROTOCOL_ERROR);
        return;
      }
      this.#requestEnded(known);
      return;
    }
    if (id % 2 === 0 || id <= this.#lastStreamId) {
      // A closed stream's HEADERS (or one a client may not open).
      if (id % 2 === 0 || id > this.#lastStreamId) {
        this.#connectionError(PROTOCOL_ERROR, 'bad stream id');
        return;
      }
      this.#connectionError(STREAM_CLOSED, `HEADERS on closed stream ${id}`);
      return;
    }
    this.#lastStreamId = id;
    if (this.#goingAway || blocks.tooLarge || this.#streams.size >= this.#limits.maxConcurrentStreams) {
      this.#rst(id, blocks.tooLarge ? PROTOCOL_ERROR : REFUSED_STREAM);
      return;
    }
    // No prototype: a client's field names are keys here.
    const headers: Record<string, string> = Object.create(null);
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i] as string;
      const value = fields[i + 1] as string;
      const before = headers[name];
      headers[name] = before === undefined ? value : `${before}, ${value}`;
    }
    const stream = new LeanStream(this, id, this.#peerInitialWindow, this.#limits.streamWindow);
    this.#streams.set(id, stream);
    stream.endsWithHeaders = endStream;
    const contentType = headers['content-type'];
    if (contentType === undefined || !contentType.startsWith('application/grpc')) {
      // As the other transports: HTTP 415 with no gRPC status.
      stream.refuse(UNSUPPORTED_MEDIA_BLOCK);
    } else serveGrpcCall(this.#context, stream, headers);
    if (endStream && !stream.requestEnded) this.#requestEnded(stream);
  }

  #requestEnded(stream: LeanStream): void {
    stream.ended();
    if (stream.closed) this.#forget(stream);
  }

  beginData(length: number, _flags: number, id: number): void {
    this.#receiveWindow -= length;
    if (this.#receiveWindow < 0) {
      this.#connectionError(FLOW_CONTROL_ERROR, 'DATA over the connection window');
      return;
    }
    this.#unacked += length;
    const stream = this.#streams.get(id);
    this.#dataStream = undefined;
    if (stream === undefined) {
      if (id === 0 || id > this.#lastStreamId) {
        this.#connectionError(PROTOCOL_ERROR, 'DATA on an idle stream');
        return;
      }
      // A stream we answered or reset already: its data is dropped (the connection window counted it).
      return;
    }
    if (stream.requestEnded) {
      this.#resetStream(stream, STREAM_CLOSED);
      return;
    }
    stream.receiveWindow -= length;
    if (stream.receiveWindow < 0) {
      this.#resetStream(stream, FLOW_CONTROL_ERROR);
      return;
    }
    stream.unacked += length;
    this.#dataStream = stream;
  }

  onData(data: Buffer): void {
    this.#dataStream?.data(data);
  }

  endData(flags: number): void {
    const stream = this.#dataStream;
    this.#dataStream = undefined;
    const half = this.#limits.sessionWindow / 2;
    if (this.#unacked >= half) {
      this.#write(this.#windowUpdate(0, this.#unacked));
      this.#receiveWindow += this.#unacked;
      this.#unacked = 0;
    }
    if (stream === undefined) return;
    if ((flags & FLAG_END_STREAM) !== 0) {
      this.#requestEnded(stream);
      return;
    }
    if (!stream.closed && stream.unacked >= this.#limits.streamWindow / 2) {
      this.#write(this.#windowUpdate(stream.id, stream.unacked));
      stream.receiveWindow += stream.unacked;
      stream.unacked = 0;
    }
  }

  #closed(): void {
    this.#over = true;
    this.#reader.stop();
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    this.#blocked.clear();
    for (const stream of streams) stream.reset();
    this.onClose();
  }
}
