// What each frame the server sends does to the session (RFC 9113, 6): header blocks and DATA to
// their streams, RST_STREAM, SETTINGS, PING, WINDOW_UPDATE and GOAWAY, and the checks that make a
// frame a stream or connection error.

import type { FrameSink } from './h2-frame-reader.js';
import {
  ENHANCE_YOUR_CALM,
  errorName,
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
  frame,
  MAX_WINDOW,
  PROTOCOL_ERROR,
  REFUSED_STREAM,
  STREAM_CLOSED,
} from './h2-frame-types.js';
import { type FrameWriter, MAX_UNFLUSHED_ANSWERS } from './h2-frame-writer.js';
import type { HeaderBlockReader } from './h2-header-block-reader.js';
import type { KeepalivePing } from './h2-keepalive-ping.js';
import type { ReceiveWindow } from './h2-receive-window.js';
import type { RequestHeaders } from './h2-request-headers.js';
import type { RequestSender } from './h2-request-sender.js';
import type { H2Session } from './h2-session.js';
import { OUR_MAX_HEADER_LIST_SIZE, type PeerSettings } from './h2-settings.js';
import { CLOSE_REFUSED, CLOSE_RESET, type SessionStream, STATE_OPEN } from './h2-stream.js';
import type { StreamTable } from './h2-stream-table.js';

const UNREAD_ANSWERS = `the server sends PING or SETTINGS frames but does not read our answers (${MAX_UNFLUSHED_ANSWERS} unsent)`;

/** The parts of a session the frame handler works on. */
export interface SessionParts {
  readonly session: H2Session;
  readonly table: StreamTable;
  readonly writer: FrameWriter;
  readonly sender: RequestSender;
  readonly receive: ReceiveWindow;
  readonly headerBlocks: HeaderBlockReader;
  readonly requestHeaders: RequestHeaders;
  readonly peer: PeerSettings;
  readonly ping: KeepalivePing;
}

export class FrameHandler implements FrameSink {
  readonly #session: H2Session;
  readonly #table: StreamTable;
  readonly #writer: FrameWriter;
  readonly #sender: RequestSender;
  readonly #receive: ReceiveWindow;
  readonly #headerBlocks: HeaderBlockReader;
  readonly #requestHeaders: RequestHeaders;
  readonly #peer: PeerSettings;
  readonly #ping: KeepalivePing;
  /** The stream of the DATA frame being read (undefined: its data is discarded). */
  #dataStream: SessionStream | undefined;

  constructor(parts: SessionParts) {
    this.#session = parts.session;
    this.#table = parts.table;
    this.#writer = parts.writer;
    this.#sender = parts.sender;
    this.#receive = parts.receive;
    this.#headerBlocks = parts.headerBlocks;
    this.#requestHeaders = parts.requestHeaders;
    this.#peer = parts.peer;
    this.#ping = parts.ping;
  }

  onFramingError(code: number, text: string): void {
    this.#session.connectionError(code, text);
  }

  beginData(length: number, _flags: number, id: number): void {
    const session = this.#session;
    this.#dataStream = undefined;
    if (id === 0) {
      session.connectionError(PROTOCOL_ERROR, 'DATA on stream 0');
      return;
    }
    if (!this.#receive.takeConnection(length)) {
      session.connectionError(FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
      return;
    }
    const stream = this.#table.open.get(id);
    if (stream === undefined) {
      if (this.#table.neverOpened(id)) {
        session.connectionError(PROTOCOL_ERROR, `DATA on stream ${id}, which was never opened`);
      }
      return;
    }
    if (stream.remoteEnded || !stream.gotHeaders) {
      session.streamError(
        stream,
        stream.remoteEnded ? STREAM_CLOSED : PROTOCOL_ERROR,
        stream.remoteEnded ? 'DATA after the end of the stream' : 'DATA before the response headers',
      );
      return;
    }
    if (!this.#receive.takeStream(stream, length)) {
      session.streamError(stream, FLOW_CONTROL_ERROR, 'DATA beyond the stream window');
      return;
    }
    this.#dataStream = stream;
  }

  onData(data: Buffer): void {
    const stream = this.#dataStream;
    if (stream !== undefined && stream.state === STATE_OPEN) stream.handler.onData(data);
  }

  endData(flags: number): void {
    const stream = this.#dataStream;
    this.#dataStream = undefined;
    if (stream === undefined || stream.state !== STATE_OPEN) return;
    if ((flags & FLAG_END_STREAM) !== 0) {
      this.#session.remoteEnd(stream);
      return;
    }
    this.#receive.endData(stream);
  }

  onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    switch (type) {
      case FRAME_HEADERS:
        if (id === 0) {
          this.#session.connectionError(PROTOCOL_ERROR, 'HEADERS on stream 0');
          return;
        }
        this.#onBlock(this.#headerBlocks.headers(payload, flags, id));
        return;
      case FRAME_CONTINUATION:
        this.#onBlock(this.#headerBlocks.continuation(payload, flags));
        return;
      case FRAME_SETTINGS:
        this.#onSettings(payload, flags, id);
        return;
      case FRAME_PING:
        this.#onPing(payload, flags, id);
        return;
      case FRAME_RST_STREAM:
        this.#onReset(payload, id);
        return;
      case FRAME_WINDOW_UPDATE:
        this.#onWindowUpdate(payload, id);
        return;
      case FRAME_GOAWAY:
        this.#onGoaway(payload, id);
        return;
      case FRAME_PRIORITY:
        if (id === 0) {
          this.#session.connectionError(PROTOCOL_ERROR, 'PRIORITY on stream 0');
          return;
        }
        if (payload.byteLength !== 5) {
          const stream = this.#table.open.get(id);
          if (stream !== undefined) {
            this.#session.streamError(stream, FRAME_SIZE_ERROR, `PRIORITY of ${payload.byteLength} bytes`);
          }
        }
        return;
      case FRAME_PUSH_PROMISE:
        this.#session.connectionError(PROTOCOL_ERROR, 'PUSH_PROMISE although push is disabled');
        return;
      default:
        // Unknown frame types are ignored (RFC 9113, 5.5).
        return;
    }
  }

  /** A header block is complete (`fields`), or still gathering or failed (`undefined`). */
  #onBlock(fields: string[] | undefined): void {
    const blocks = this.#headerBlocks;
    const session = this.#session;
    if (fields === undefined) {
      if (blocks.errorCode !== 0) session.connectionError(blocks.errorCode, blocks.errorText);
      return;
    }
    const id = blocks.streamId;
    const endStream = blocks.endStream;
    const stream = this.#table.open.get(id);
    if (stream === undefined) {
      if (this.#table.neverOpened(id)) {
        session.connectionError(PROTOCOL_ERROR, `HEADERS on stream ${id}, which was never opened`);
      }
      return;
    }
    if (blocks.tooLarge) {
      session.streamError(
        stream,
        PROTOCOL_ERROR,
        `a header block that decodes to over ${OUR_MAX_HEADER_LIST_SIZE} bytes (our SETTINGS_MAX_HEADER_LIST_SIZE)`,
      );
      return;
    }
    if (stream.remoteEnded) {
      session.streamError(stream, STREAM_CLOSED, 'HEADERS after the end of the stream');
      return;
    }
    if (stream.gotHeaders && !endStream) {
      session.streamError(stream, PROTOCOL_ERROR, 'trailers without END_STREAM');
      return;
    }
    stream.gotHeaders = true;
    stream.handler.onHeaders(fields, endStream);
    if (endStream && stream.state === STATE_OPEN) session.remoteEnd(stream);
  }

  #onSettings(payload: Buffer, flags: number, id: number): void {
    const session = this.#session;
    if (id !== 0) {
      session.connectionError(PROTOCOL_ERROR, 'SETTINGS on a stream');
      return;
    }
    if ((flags & FLAG_ACK) !== 0) {
      if (payload.byteLength !== 0)
        session.connectionError(FRAME_SIZE_ERROR, 'a SETTINGS ACK with a payload');
      return;
    }
    const peer = this.#peer;
    const code = peer.apply(payload, this.#table.open, this.#requestHeaders);
    if (code !== 0) {
      session.connectionError(code, peer.errorText);
      return;
    }
    if (!this.#writer.writeAnswer(frame(FRAME_SETTINGS, FLAG_ACK, 0))) {
      session.connectionError(ENHANCE_YOUR_CALM, UNREAD_ANSWERS);
      return;
    }
    if (peer.windowGrew) for (const stream of [...this.#table.open.values()]) this.#sender.resume(stream);
    session.settingsApplied();
  }

  #onPing(payload: Buffer, flags: number, id: number): void {
    if (id !== 0) {
      this.#session.connectionError(PROTOCOL_ERROR, 'PING on a stream');
      return;
    }
    if (payload.byteLength !== 8) {
      this.#session.connectionError(FRAME_SIZE_ERROR, `PING of ${payload.byteLength} bytes`);
      return;
    }
    if ((flags & FLAG_ACK) !== 0) this.#ping.onAck(payload);
    else if (!this.#writer.writeAnswer(frame(FRAME_PING, FLAG_ACK, 0, payload))) {
      this.#session.connectionError(ENHANCE_YOUR_CALM, UNREAD_ANSWERS);
    }
  }

  #onReset(payload: Buffer, id: number): void {
    const session = this.#session;
    if (id === 0) {
      session.connectionError(PROTOCOL_ERROR, 'RST_STREAM on stream 0');
      return;
    }
    if (payload.byteLength !== 4) {
      session.connectionError(FRAME_SIZE_ERROR, `RST_STREAM of ${payload.byteLength} bytes`);
      return;
    }
    const stream = this.#table.open.get(id);
    if (stream === undefined) {
      if (this.#table.neverOpened(id)) {
        session.connectionError(PROTOCOL_ERROR, `RST_STREAM on stream ${id}, which was never opened`);
      }
      return;
    }
    const code = payload.readUInt32BE(0);
    session.endStream(
      stream,
      code === REFUSED_STREAM ? CLOSE_REFUSED : CLOSE_RESET,
      code,
      `the server reset the stream (HTTP/2 ${errorName(code)})`,
    );
  }

  #onWindowUpdate(payload: Buffer, id: number): void {
    const session = this.#session;
    if (payload.byteLength !== 4) {
      session.connectionError(FRAME_SIZE_ERROR, `WINDOW_UPDATE of ${payload.byteLength} bytes`);
      return;
    }
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) session.connectionError(PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      else if (!this.#sender.growConnectionWindow(increment)) {
        session.connectionError(FLOW_CONTROL_ERROR, 'the connection window went over 2^31-1');
      }
      return;
    }
    const stream = this.#table.open.get(id);
    if (stream === undefined) return;
    if (increment === 0) {
      session.streamError(stream, PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      return;
    }
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) {
      session.streamError(stream, FLOW_CONTROL_ERROR, 'the stream window went over 2^31-1');
      return;
    }
    this.#sender.resume(stream);
  }

  #onGoaway(payload: Buffer, id: number): void {
    if (id !== 0) {
      this.#session.connectionError(PROTOCOL_ERROR, 'GOAWAY on a stream');
      return;
    }
    if (payload.byteLength < 8) {
      this.#session.connectionError(FRAME_SIZE_ERROR, 'GOAWAY under 8 bytes');
      return;
    }
    const last = payload.readUInt32BE(0) & 0x7fffffff;
    const code = payload.readUInt32BE(4);
    const debug = payload.toString('utf8', 8, Math.min(payload.byteLength, 8 + 200));
    this.#session.goaway(
      last,
      code,
      `the server sent GOAWAY (${errorName(code)}${debug === '' ? '' : `: ${debug}`})`,
    );
  }
}
