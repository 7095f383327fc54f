// One HTTP/2 connection of the lean gRPC transport: the client's preface and frames read with core's
// frame reader and HPACK decoder, the answers written by hand (h2-grpc-lean-sender.ts). What it keeps
// per connection and per stream is what gRPC needs and RFC 9113 requires of a server: SETTINGS
// (acknowledged, the peer's window and frame size applied), PING answered, both directions' flow
// control, RST_STREAM and GOAWAY, a cap on open streams. A unary answer's HEADERS, DATA and trailers
// leave in one write.
import type { Socket } from 'node:net';
import {
  DEFAULT_WINDOW,
  ENHANCE_YOUR_CALM,
  FLAG_ACK,
  FLAG_END_STREAM,
  FLOW_CONTROL_ERROR,
  FRAME_CONTINUATION,
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
  frame32,
  goawayFrame,
  HeaderBlockReader,
  MAX_WINDOW,
  NO_ERROR,
  PREFACE,
  PROTOCOL_ERROR,
  REFUSED_STREAM,
  STREAM_CLOSED,
} from '@infergate/core/internal/grpc-frames';
import type { H2ServeContext } from './h2-grpc-call.js';
import { serveGrpcCall } from './h2-grpc-call.js';
import { UNSUPPORTED_MEDIA_BLOCK } from './h2-grpc-lean-frames.js';
import { LeanSender } from './h2-grpc-lean-sender.js';
import { type LeanLimits, readPeerSettings, settingsFrame } from './h2-grpc-lean-settings.js';
import { LeanStream } from './h2-grpc-lean-stream.js';

const noop = () => {};

/** One connection (plain or TLS socket, after ALPN). */
export class LeanSession implements FrameSink {
  readonly #socket: Socket;
  readonly #context: H2ServeContext;
  readonly #limits: LeanLimits;
  readonly #reader: FrameReader;
  readonly #sender: LeanSender;
  readonly #blocks = new HeaderBlockReader();
  readonly #streams = new Map<number, LeanStream>();
  #prefaceSeen = 0;
  #lastStreamId = 0;
  #goingAway = false;
  /** The peer's initial stream window (its SETTINGS). */
  #peerInitialWindow = DEFAULT_WINDOW;
  /** Bytes the client may still send, and what it sent that we have not given back yet. */
  #receiveWindow: number;
  #unacked = 0;
  /** The stream the DATA frame being read belongs to (undefined: none, or one we drop). */
  #dataStream: LeanStream | undefined;
  /** Called once the connection is over (socket closed). */
  onClose: () => void = noop;

  constructor(socket: Socket, context: H2ServeContext, limits: LeanLimits) {
    this.#socket = socket;
    this.#context = context;
    this.#limits = limits;
    this.#receiveWindow = limits.sessionWindow;
    this.#reader = new FrameReader(this);
    this.#sender = new LeanSender(socket, (stream) => this.#forget(stream));
    socket.setNoDelay(true);
    socket.on('error', noop);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.once('close', () => this.#closed());
    this.#sender.write(settingsFrame(limits));
    if (limits.sessionWindow > DEFAULT_WINDOW) {
      this.#sender.write(frame32(FRAME_WINDOW_UPDATE, 0, limits.sessionWindow - DEFAULT_WINDOW));
    }
  }

  /** No new streams (GOAWAY); the connection ends once the open ones are done. */
  goAway(): void {
    if (this.#goingAway || this.#sender.over) return;
    this.#goingAway = true;
    this.#sender.write(goawayFrame(this.#lastStreamId, NO_ERROR, ''));
    this.#endIfIdle();
  }

  /** Drops the connection at once (clients see it lost). */
  destroy(): void {
    this.#socket.destroy();
  }

  /** An acknowledgement the client asked for (PING, SETTINGS); too many unread ones end the connection. */
  #answer(buffer: Buffer): void {
    if (!this.#sender.answer(buffer)) {
      this.#connectionError(ENHANCE_YOUR_CALM, 'too many PING or SETTINGS frames left unread');
    }
  }

  /** `stream` is over on our side (answered or reset): no longer counted or found. */
  #forget(stream: LeanStream): void {
    this.#streams.delete(stream.id);
    this.#sender.drop(stream);
    this.#endIfIdle();
  }

  #endIfIdle(): void {
    if (this.#goingAway && this.#streams.size === 0 && !this.#sender.over) {
      this.#socket.end();
    }
  }

  #read(chunk: Buffer): void {
    if (this.#sender.over) return;
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
    const sender = this.#sender;
    if (sender.over) return;
    this.#reader.stop();
    sender.write(goawayFrame(this.#lastStreamId, code, text));
    sender.flush();
    sender.stop();
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
        this.#sender.drop(stream);
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
    const settings = readPeerSettings(flags, id, payload);
    if (settings === undefined) return;
    if ('code' in settings) {
      this.#connectionError(settings.code, settings.text);
      return;
    }
    const { initialWindow, maxFrame } = settings;
    if (initialWindow !== undefined) {
      const delta = initialWindow - this.#peerInitialWindow;
      this.#peerInitialWindow = initialWindow;
      for (const stream of this.#streams.values()) stream.sendWindow += delta;
    }
    if (maxFrame !== undefined) this.#sender.peerMaxFrame = maxFrame;
    this.#answer(frame(FRAME_SETTINGS, FLAG_ACK, 0, Buffer.alloc(0)));
    this.#sender.pumpBlocked();
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
      if (!this.#sender.connectionWindowUpdate(increment)) {
        this.#connectionError(FLOW_CONTROL_ERROR, 'window over 2^31-1');
      }
      return;
    }
    const stream = this.#streams.get(id);
    if (stream === undefined) return;
    if (increment === 0 || stream.sendWindow + increment > MAX_WINDOW) {
      this.#resetStream(stream, increment === 0 ? PROTOCOL_ERROR : FLOW_CONTROL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    this.#sender.streamWindowUpdated(stream);
  }

  /** Ends `stream` with RST_STREAM `code`; the call is cancelled. */
  #resetStream(stream: LeanStream, code: number): void {
    this.#sender.rst(stream.id, code);
    this.#streams.delete(stream.id);
    this.#sender.drop(stream);
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
      this.#sender.rst(id, blocks.tooLarge ? PROTOCOL_ERROR : REFUSED_STREAM);
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
    const stream = new LeanStream(this.#sender, id, this.#peerInitialWindow, this.#limits.streamWindow);
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
      this.#sender.write(frame32(FRAME_WINDOW_UPDATE, 0, this.#unacked));
      this.#receiveWindow += this.#unacked;
      this.#unacked = 0;
    }
    if (stream === undefined) return;
    if ((flags & FLAG_END_STREAM) !== 0) {
      this.#requestEnded(stream);
      return;
    }
    if (!stream.closed && stream.unacked >= this.#limits.streamWindow / 2) {
      this.#sender.write(frame32(FRAME_WINDOW_UPDATE, stream.id, stream.unacked));
      stream.receiveWindow += stream.unacked;
      stream.unacked = 0;
    }
  }

  #closed(): void {
    this.#sender.stop();
    this.#reader.stop();
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    this.#sender.dropAll();
    for (const stream of streams) stream.reset();
    this.onClose();
  }
}
