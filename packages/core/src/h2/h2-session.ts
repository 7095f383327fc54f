// A lean HTTP/2 client session (RFC 9113) over one socket, for gRPC calls: the preface and
// SETTINGS, HEADERS/CONTINUATION with HPACK, DATA with flow control both ways, RST_STREAM, PING,
// GOAWAY and WINDOW_UPDATE. No stream objects or events per call: each stream reports to a
// `StreamHandler` (the call itself). Header compression is `hpack.ts`'s.
import type { Socket } from 'node:net';
import {
  CANCEL,
  COMPRESSION_ERROR,
  DEFAULT_HEADER_TABLE_SIZE,
  DEFAULT_WINDOW,
  errorName,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
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
  frame,
  frame32,
  MAX_MAX_FRAME_SIZE,
  MAX_STREAM_ID,
  MAX_WINDOW,
  MIN_MAX_FRAME_SIZE,
  NO_ERROR,
  PREFACE,
  PROTOCOL_ERROR,
  REFUSED_STREAM,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_HEADER_TABLE_SIZE,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  STREAM_CLOSED,
  writeFrameHead,
} from './h2-frame-types.js';
import { HpackDecoder, HpackEncoder, HpackError } from './hpack.js';

/** How a stream ended (`StreamHandler.onClose`'s `kind`). */
export const CLOSE_END = 0;
/** The server reset the stream (`code`: its HTTP/2 error code). */
export const CLOSE_RESET = 1;
/** The server did not process the stream (GOAWAY above it, or REFUSED_STREAM): safe to retry. */
export const CLOSE_REFUSED = 2;
/** The connection ended (`message` says why). */
export const CLOSE_LOST = 3;
/** The server broke the protocol on this stream or connection (`code`, `message`). */
export const CLOSE_PROTOCOL = 4;
/** Too many calls waiting for the server's MAX_CONCURRENT_STREAMS (the wait queue is full). */
export const CLOSE_BUSY = 5;

/** What a stream tells its call. Called synchronously from the socket's reads. */
export interface StreamHandler {
  /** A header block: names and values alternating. The first is the response's, any later the trailers. */
  onHeaders(fields: string[], endStream: boolean): void;
  /** Response bytes, a view of the received chunk (the handler may keep it). */
  onData(data: Buffer): void;
  /** The stream is over: once, unless the call reset it itself. */
  onClose(kind: number, code: number, message: string): void;
}

export interface H2SessionEvents {
  /** The server's first SETTINGS arrived. */
  onReady(): void;
  /** The session takes no new streams (GOAWAY, or its stream ids ran out); running ones go on. */
  onDraining(): void;
  /** The socket closed; `error` if it failed. */
  onClose(error: Error | undefined): void;
}

/**
 * When a request's bytes go to the socket. `microtask` (the engine's): held (corked) until the
 * microtask queue drains, so the requests the answers of one read start leave in one write, before
 * the event loop moves on; `now`: a write per request; `immediate`: at the next setImmediate, as
 * node:http2 does. The unary benchmark compares them (docs/benchmarks.md).
 */
export type WritePolicy = 'now' | 'microtask' | 'immediate';

export interface H2SessionOptions {
  authority: string;
  scheme: 'http' | 'https';
  events: H2SessionEvents;
  /** Calls beyond the server's MAX_CONCURRENT_STREAMS wait in a FIFO of at most this many. */
  maxWaiting?: number | undefined;
  /** The first stream id (odd); only tests start elsewhere than 1. */
  firstStreamId?: number | undefined;
  writePolicy?: WritePolicy | undefined;
}

/**
 * Our receive windows. HTTP/2's default (64 KiB per stream and per connection) makes a 1 MiB answer
 * wait for 16 WINDOW_UPDATE round trips; gRPC's C core grows its windows by bandwidth probing to the
 * same end. 16 MiB per stream and 64 MiB for the connection keep large tensors flowing.
 */
export const STREAM_WINDOW = 16 * 1024 * 1024;
export const CONNECTION_WINDOW = 64 * 1024 * 1024;
/** The largest frame we accept. DATA is read in pieces as it arrives; other frames are gathered whole. */
export const OUR_MAX_FRAME_SIZE = 1024 * 1024;
/** The most header-block pieces a session keeps per path and per deadline text (then it starts over). */
const MAX_CACHED_BLOCKS = 64;
/** The largest header block (HEADERS + CONTINUATION) we gather. */
const MAX_HEADER_BLOCK = 1024 * 1024;
/** The wait queue's default bound. */
const DEFAULT_MAX_WAITING = 4096;
/** A request of at most this many bytes (frames included) goes out as one buffer; a larger one uncopied. */
const COALESCE_LIMIT = 32 * 1024;

const STATE_WAITING = 0;
const STATE_OPEN = 1;
const STATE_CLOSED = 2;

/** One stream: what to send, the windows, and whom to tell. */
export class SessionStream {
  id = 0;
  state = STATE_WAITING;
  readonly handler: StreamHandler;
  readonly path: string;
  readonly headers: Record<string, string> | undefined;
  readonly timeout: string | undefined;
  body: readonly Uint8Array[];
  /** Bytes of `body` not yet sent, and where sending resumes. */
  remaining: number;
  chunk = 0;
  offset = 0;
  sendWindow = 0;
  recvWindow = STREAM_WINDOW;
  /** Received bytes consumed but not yet credited back, and those held back while paused. */
  unacked = 0;
  withheld = 0;
  paused = false;
  /** Waiting in the session's list of streams blocked by the connection window. */
  blocked = false;
  localEnded = false;
  remoteEnded = false;
  gotHeaders = false;

  constructor(
    handler: StreamHandler,
    path: string,
    headers: Record<string, string> | undefined,
    timeout: string | undefined,
    body: readonly Uint8Array[],
  ) {
    this.handler = handler;
    this.path = path;
    this.headers = headers;
    this.timeout = timeout;
    this.body = body;
    let total = 0;
    for (const chunk of body) total += chunk.byteLength;
    this.remaining = total;
  }
}

const READ_HEAD = 0;
const READ_PAYLOAD = 1;
const READ_DATA = 2;

const indexAll = () => true;
const indexNone = () => false;

/** True if `block` is `count` one-byte indexed fields: sending it again changes no HPACK table. */
function allIndexed(block: Uint8Array, count: number): boolean {
  if (block.byteLength !== count) return false;
  for (let i = 0; i < count; i++) {
    const byte = block[i] as number;
    if (byte < 0x81 || byte === 0xff) return false;
  }
  return true;
}

function scheduleMicrotaskUncork(session: H2Session): void {
  queueMicrotask(() => session.uncork());
}

/**
 * One HTTP/2 client connection. The caller dials the socket (net or tls) and hands it over at once;
 * the session writes the preface and its SETTINGS before anything else.
 */
export class H2Session {
  readonly #socket: Socket;
  readonly #events: H2SessionEvents;
  readonly #authority: string;
  readonly #scheme: string;
  readonly #maxWaiting: number;
  readonly #policy: WritePolicy;
  readonly #streams = new Map<number, SessionStream>();
  readonly #waiting: SessionStream[] = [];
  /** Streams with DATA to send once the connection window grows. */
  #blocked: SessionStream[] = [];
  #nextId: number;
  #ready = false;
  #draining = false;
  #done = false;
  #error: Error | undefined;
  #corked = false;

  // The peer's settings and our send windows.
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = MIN_MAX_FRAME_SIZE;
  #peerMaxStreams = Number.POSITIVE_INFINITY;
  #sendWindow = DEFAULT_WINDOW;

  // Our receive side.
  #recvWindow = CONNECTION_WINDOW;
  #connUnacked = 0;
  #lastPeerStream = 0;

  // HPACK.
  readonly #decoder = new HpackDecoder(DEFAULT_HEADER_TABLE_SIZE);
  readonly #encoder = new HpackEncoder(DEFAULT_HEADER_TABLE_SIZE);
  /** Per path: the constant fields once they sit in the encoder's table (one indexed byte each). */
  readonly #heads = new Map<string, Buffer>();
  /** Per grpc-timeout text: its literal (no table entry). Deadlines that vary per call make many. */
  readonly #timeouts = new Map<string, Buffer>();
  /** The per-call part of the header block `#headerBlock` made last (see there). */
  #blockTail: Buffer | undefined;
  #fields: string[] = [];
  readonly #onField = (name: string, value: string) => {
    this.#fields.push(name, value);
  };

  // The frame reader.
  #readState = READ_HEAD;
  #sawFrame = false;
  readonly #head = Buffer.allocUnsafe(9);
  #headFill = 0;
  #length = 0;
  #type = 0;
  #flags = 0;
  #streamId = 0;
  #payload: Buffer | undefined;
  #payloadFill = 0;
  /** DATA being read: its stream (undefined: discarded), bytes of data and of padding left. */
  #dataStream: SessionStream | undefined;
  #dataLeft = 0;
  #padLeft = 0;
  #needPadLength = false;
  /** A header block waiting for CONTINUATION. */
  #blockStream = 0;
  #blockEndStream = false;
  #blockParts: Buffer[] = [];
  #blockSize = 0;

  // Keepalive.
  #pingTimer: NodeJS.Timeout | undefined;
  #pingPayload: Buffer | undefined;
  #pingDone: (() => void) | undefined;

  constructor(socket: Socket, options: H2SessionOptions) {
    this.#socket = socket;
    this.#events = options.events;
    this.#authority = options.authority;
    this.#scheme = options.scheme;
    this.#maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING;
    this.#nextId = options.firstStreamId ?? 1;
    this.#policy = options.writePolicy ?? 'microtask';
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', (error: Error) => {
      this.#error ??= error;
    });
    socket.on('close', () => this.#terminate(this.#error));
    const settings = Buffer.allocUnsafe(24);
    const pairs = [
      [SETTINGS_ENABLE_PUSH, 0],
      [SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW],
      [SETTINGS_MAX_FRAME_SIZE, OUR_MAX_FRAME_SIZE],
      [SETTINGS_HEADER_TABLE_SIZE, DEFAULT_HEADER_TABLE_SIZE],
    ] as const;
    pairs.forEach(([id, value], index) => {
      settings.writeUInt16BE(id, index * 6);
      settings.writeUInt32BE(value, index * 6 + 2);
    });
    socket.write(
      Buffer.concat([
        PREFACE,
        frame(FRAME_SETTINGS, 0, 0, settings),
        frame32(FRAME_WINDOW_UPDATE, 0, CONNECTION_WINDOW - DEFAULT_WINDOW),
      ]),
    );
  }

  /** The server's first SETTINGS has arrived. */
  get ready(): boolean {
    return this.#ready;
  }

  /** True while new streams may start here. */
  get acceptsStreams(): boolean {
    return !this.#draining && !this.#done;
  }

  get closed(): boolean {
    return this.#done;
  }

  /** Streams open and waiting. */
  get activeStreams(): number {
    return this.#streams.size + this.#waiting.length;
  }

  ref(): void {
    this.#socket.ref();
  }

  unref(): void {
    this.#socket.unref();
  }

  /**
   * Starts a stream: HEADERS, then `body` as DATA ending the stream. If the server's
   * MAX_CONCURRENT_STREAMS is reached it waits (FIFO); `reset` takes it back.
   */
  request(
    handler: StreamHandler,
    path: string,
    headers: Record<string, string> | undefined,
    timeout: string | undefined,
    body: readonly Uint8Array[],
  ): SessionStream {
    const stream = new SessionStream(handler, path, headers, timeout, body);
    if (this.#done || this.#draining) {
      stream.state = STATE_CLOSED;
      handler.onClose(
        this.#done ? CLOSE_LOST : CLOSE_REFUSED,
        0,
        this.#error?.message ?? 'the connection is closing',
      );
      return stream;
    }
    if (this.#streams.size >= this.#peerMaxStreams || this.#waiting.length > 0) {
      if (this.#waiting.length >= this.#maxWaiting) {
        stream.state = STATE_CLOSED;
        handler.onClose(
          CLOSE_BUSY,
          0,
          `${this.#waiting.length} calls already wait for the server's limit of ${this.#peerMaxStreams} concurrent streams`,
        );
        return stream;
      }
      this.#waiting.push(stream);
      return stream;
    }
    this.#open(stream);
    return stream;
  }

  /** Ends a stream from our side (RST_STREAM `code`); its handler hears nothing more. */
  reset(stream: SessionStream, code = CANCEL): void {
    if (stream.state === STATE_WAITING) {
      stream.state = STATE_CLOSED;
      const index = this.#waiting.indexOf(stream);
      if (index >= 0) this.#waiting.splice(index, 1);
      return;
    }
    if (stream.state !== STATE_OPEN) return;
    this.#forget(stream);
    if (!this.#done) this.#write(frame32(FRAME_RST_STREAM, stream.id, code));
    this.#afterClose();
  }

  /** Stops crediting the stream's receive window (the server then stops once it is used up). */
  pause(stream: SessionStream): void {
    stream.paused = true;
  }

  resume(stream: SessionStream): void {
    if (!stream.paused) return;
    stream.paused = false;
    stream.unacked += stream.withheld;
    stream.withheld = 0;
    if (stream.unacked > 0 && stream.state === STATE_OPEN && !stream.remoteEnded) {
      this.#creditStream(stream);
    }
  }

  /**
   * Sends a PING; `onAnswer` when the ACK comes. Not answered within `timeoutMs`, the session is
   * destroyed. False if a ping is already out or the session is over.
   */
  ping(timeoutMs: number, onAnswer?: () => void): boolean {
    if (this.#done || this.#pingPayload !== undefined) return false;
    const payload = Buffer.allocUnsafe(8);
    payload.writeDoubleBE(Date.now());
    this.#pingPayload = payload;
    this.#pingDone = onAnswer;
    this.#pingTimer = setTimeout(() => {
      this.destroy(new Error(`keepalive ping not answered within ${timeoutMs} ms`));
    }, timeoutMs);
    this.#pingTimer.unref();
    this.#write(frame(FRAME_PING, 0, 0, payload));
    return true;
  }

  /** Closes the socket at once; every stream fails with `error`'s text. */
  destroy(error?: Error): void {
    if (error !== undefined) this.#error ??= error;
    this.#terminate(this.#error);
  }

  /** Flushes writes held by the `microtask`/`immediate` policies. */
  uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.#socket.uncork();
  }

  // ---- writing ----

  #write(buffer: Uint8Array): void {
    if (this.#policy !== 'now' && !this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      if (this.#policy === 'microtask') scheduleMicrotaskUncork(this);
      else setImmediate(() => this.uncork());
    }
    this.#socket.write(buffer);
  }

  #open(stream: SessionStream): void {
    if (this.#nextId > MAX_STREAM_ID) {
      // Stream ids are spent: this connection takes no more; the caller's next call dials anew.
      stream.state = STATE_CLOSED;
      this.#drain();
      stream.handler.onClose(CLOSE_REFUSED, 0, 'the connection ran out of stream ids');
      return;
    }
    stream.id = this.#nextId;
    this.#nextId += 2;
    // The last id: this connection takes no more streams once this one is sent.
    if (this.#nextId > MAX_STREAM_ID) queueMicrotask(() => this.#drain());
    stream.state = STATE_OPEN;
    stream.sendWindow = this.#peerInitialWindow;
    this.#streams.set(stream.id, stream);
    const head = this.#headerBlock(stream);
    const tail = this.#blockTail;
    this.#blockTail = undefined;
    const blockLength = head.byteLength + (tail === undefined ? 0 : tail.byteLength);
    const endStream = stream.remaining === 0;
    const maxFrame = this.#peerMaxFrame;
    // The usual request: HEADERS fits one frame and the body is small: one buffer, one write.
    const dataLength = Math.min(stream.remaining, stream.sendWindow, this.#sendWindow, maxFrame);
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
        this.#sendWindow -= dataLength;
        stream.body = [];
      }
      stream.localEnded = true;
      this.#write(out);
      return;
    }
    const corkHere = this.#policy === 'now';
    if (corkHere) this.#socket.cork();
    this.#writeHeaders(stream.id, tail === undefined ? head : Buffer.concat([head, tail]), endStream);
    if (endStream) stream.localEnded = true;
    else this.#sendData(stream);
    if (corkHere) this.#socket.uncork();
  }

  #writeHeaders(id: number, block: Buffer, endStream: boolean): void {
    const maxFrame = this.#peerMaxFrame;
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
      this.#write(out);
      offset += length;
      type = FRAME_CONTINUATION;
    } while (offset < block.byteLength);
  }

  /** Sends as much of the stream's body as the windows allow; waits for WINDOW_UPDATE for the rest. */
  #sendData(stream: SessionStream): void {
    const maxFrame = this.#peerMaxFrame;
    while (stream.remaining > 0) {
      const allowed = Math.min(stream.sendWindow, this.#sendWindow, maxFrame, stream.remaining);
      if (allowed <= 0) {
        if (this.#sendWindow <= 0 && stream.sendWindow > 0 && !stream.blocked) {
          stream.blocked = true;
          this.#blocked.push(stream);
        }
        return;
      }
      stream.remaining -= allowed;
      stream.sendWindow -= allowed;
      this.#sendWindow -= allowed;
      const end = stream.remaining === 0;
      const head = Buffer.allocUnsafe(9);
      writeFrameHead(head, 0, allowed, FRAME_DATA, end ? FLAG_END_STREAM : 0, stream.id);
      this.#write(head);
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
        this.#write(take === chunk.byteLength ? chunk : chunk.subarray(stream.offset, stream.offset + take));
        stream.offset += take;
        left -= take;
      }
      if (end) {
        stream.localEnded = true;
        stream.body = [];
      }
    }
  }

  /**
   * A request's header block in two parts, so the usual request copies each once, into its frame:
   * the fixed fields (returned) and the per-call rest (`#blockTail`, `undefined` if none), which
   * the caller takes and clears.
   */
  #headerBlock(stream: SessionStream): Buffer {
    let head = this.#heads.get(stream.path);
    if (head === undefined) {
      const encoded = this.#encoder.encode(
        [
          [':method', 'POST'],
          [':scheme', this.#scheme],
          [':path', stream.path],
          [':authority', this.#authority],
          ['content-type', 'application/grpc'],
          ['te', 'trailers'],
        ],
        indexAll,
      );
      if (allIndexed(encoded, 6)) {
        if (this.#heads.size >= MAX_CACHED_BLOCKS) this.#heads.clear();
        this.#heads.set(stream.path, encoded);
      } else {
        // Entries went into the table: indexes cached for other paths have moved.
        this.#heads.clear();
        this.#timeouts.clear();
      }
      head = encoded;
    }
    const { timeout, headers } = stream;
    let hasHeaders = false;
    if (headers !== undefined) for (const _ in headers) hasHeaders = true;
    if (!hasHeaders) {
      if (timeout === undefined) return head;
      let literal = this.#timeouts.get(timeout);
      if (literal === undefined) {
        literal = this.#encoder.encode([['grpc-timeout', timeout]], indexNone);
        if (this.#timeouts.size >= MAX_CACHED_BLOCKS) this.#timeouts.clear();
        this.#timeouts.set(timeout, literal);
      }
      this.#blockTail = literal;
      return head;
    }
    const fields: [string, string][] = [];
    if (timeout !== undefined) fields.push(['grpc-timeout', timeout]);
    for (const name in headers) fields.push([name, (headers as Record<string, string>)[name] as string]);
    this.#blockTail = this.#encoder.encode(fields, indexNone);
    return head;
  }

  // ---- reading ----

  #read(chunk: Buffer): void {
    let pos = 0;
    const end = chunk.byteLength;
    while (pos < end && !this.#done) {
      const state = this.#readState;
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
          this.#readState = READ_HEAD;
          this.#frame(chunk.subarray(pos, pos + length));
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
          this.#readState = READ_HEAD;
          this.#frame(payload);
        }
      }
    }
  }

  #beginFrame(length: number, type: number, flags: number, id: number, head: Buffer, at: number): void {
    if (!this.#sawFrame) {
      this.#sawFrame = true;
      if (head.toString('latin1', at, at + 5) === 'HTTP/') {
        this.#connectionError(PROTOCOL_ERROR, 'the server answered in HTTP/1, not HTTP/2');
        return;
      }
      if (type !== FRAME_SETTINGS || (flags & FLAG_ACK) !== 0) {
        this.#connectionError(PROTOCOL_ERROR, `the server's first frame was type ${type}, not SETTINGS`);
        return;
      }
    }
    if (length > OUR_MAX_FRAME_SIZE) {
      this.#connectionError(FRAME_SIZE_ERROR, `a frame of ${length} bytes is over our limit`);
      return;
    }
    if (this.#blockStream !== 0 && (type !== FRAME_CONTINUATION || id !== this.#blockStream)) {
      this.#connectionError(PROTOCOL_ERROR, 'a header block was interrupted before END_HEADERS');
      return;
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
      this.#frame(EMPTY);
      return;
    }
    this.#readState = READ_PAYLOAD;
  }

  #beginData(length: number, flags: number, id: number): void {
    if (id === 0) {
      this.#connectionError(PROTOCOL_ERROR, 'DATA on stream 0');
      return;
    }
    this.#recvWindow -= length;
    if (this.#recvWindow < 0) {
      this.#connectionError(FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
      return;
    }
    // The connection's credit goes back at once: a paused stream holds back its own window only.
    this.#connUnacked += length;
    if (this.#connUnacked >= CONNECTION_WINDOW / 2) {
      this.#recvWindow += this.#connUnacked;
      this.#write(frame32(FRAME_WINDOW_UPDATE, 0, this.#connUnacked));
      this.#connUnacked = 0;
    }
    let stream = this.#streams.get(id);
    if (stream === undefined) {
      if (id >= this.#nextId || id % 2 === 0) {
        this.#connectionError(PROTOCOL_ERROR, `DATA on stream ${id}, which was never opened`);
        return;
      }
    } else if (stream.remoteEnded || !stream.gotHeaders) {
      this.#streamError(
        stream,
        stream.remoteEnded ? STREAM_CLOSED : PROTOCOL_ERROR,
        stream.remoteEnded ? 'DATA after the end of the stream' : 'DATA before the response headers',
      );
      stream = undefined;
    } else {
      stream.recvWindow -= length;
      if (stream.recvWindow < 0) {
        this.#streamError(stream, FLOW_CONTROL_ERROR, 'DATA beyond the stream window');
        stream = undefined;
      } else if (stream.paused) stream.withheld += length;
      else stream.unacked += length;
    }
    this.#dataStream = stream;
    this.#needPadLength = (flags & FLAG_PADDED) !== 0;
    this.#dataLeft = this.#needPadLength ? length - 1 : length;
    this.#padLeft = 0;
    if (this.#needPadLength && length === 0) {
      this.#connectionError(FRAME_SIZE_ERROR, 'a padded DATA frame without its pad length');
      return;
    }
    if (length === 0) {
      this.#endData();
      return;
    }
    this.#readState = READ_DATA;
  }

  #readData(chunk: Buffer, start: number): number {
    let pos = start;
    const end = chunk.byteLength;
    if (this.#needPadLength) {
      this.#needPadLength = false;
      const pad = chunk[pos++] as number;
      if (pad > this.#dataLeft) {
        this.#connectionError(PROTOCOL_ERROR, 'DATA padding longer than the frame');
        return end;
      }
      this.#dataLeft -= pad;
      this.#padLeft = pad;
    }
    if (this.#dataLeft > 0 && pos < end) {
      const take = Math.min(this.#dataLeft, end - pos);
      const stream = this.#dataStream;
      this.#dataLeft -= take;
      if (stream !== undefined && stream.state === STATE_OPEN) {
        stream.handler.onData(pos === 0 && take === end ? chunk : chunk.subarray(pos, pos + take));
      }
      pos += take;
    }
    if (this.#dataLeft === 0 && this.#padLeft > 0 && pos < end) {
      const take = Math.min(this.#padLeft, end - pos);
      this.#padLeft -= take;
      pos += take;
    }
    if (this.#dataLeft === 0 && this.#padLeft === 0 && !this.#needPadLength) this.#endData();
    return pos;
  }

  #endData(): void {
    this.#readState = READ_HEAD;
    const stream = this.#dataStream;
    this.#dataStream = undefined;
    if (stream === undefined || stream.state !== STATE_OPEN) return;
    if ((this.#flags & FLAG_END_STREAM) !== 0) {
      this.#remoteEnd(stream);
      return;
    }
    if (stream.unacked >= STREAM_WINDOW / 2) this.#creditStream(stream);
  }

  #creditStream(stream: SessionStream): void {
    stream.recvWindow += stream.unacked;
    this.#write(frame32(FRAME_WINDOW_UPDATE, stream.id, stream.unacked));
    stream.unacked = 0;
  }

  /** A whole non-DATA frame. */
  #frame(payload: Buffer): void {
    const id = this.#streamId;
    const flags = this.#flags;
    const length = payload.byteLength;
    switch (this.#type) {
      case FRAME_HEADERS: {
        this.#onHeadersFrame(payload, flags, id);
        return;
      }
      case FRAME_CONTINUATION:
        if (this.#blockStream === 0) {
          this.#connectionError(PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
          return;
        }
        {
          this.#addBlock(payload, flags);
          return;
        }
      case FRAME_SETTINGS: {
        this.#onSettings(payload, flags, id);
        return;
      }
      case FRAME_PING:
        if (id !== 0) {
          this.#connectionError(PROTOCOL_ERROR, 'PING on a stream');
          return;
        }
        if (length !== 8) {
          this.#connectionError(FRAME_SIZE_ERROR, `PING of ${length} bytes`);
          return;
        }
        if ((flags & FLAG_ACK) === 0) {
          this.#write(frame(FRAME_PING, FLAG_ACK, 0, payload));
        } else if (this.#pingPayload?.equals(payload)) {
          clearTimeout(this.#pingTimer);
          const done = this.#pingDone;
          this.#pingPayload = undefined;
          this.#pingDone = undefined;
          done?.();
        }
        return;
      case FRAME_RST_STREAM: {
        if (id === 0) {
          this.#connectionError(PROTOCOL_ERROR, 'RST_STREAM on stream 0');
          return;
        }
        if (length !== 4) {
          this.#connectionError(FRAME_SIZE_ERROR, `RST_STREAM of ${length} bytes`);
          return;
        }
        const stream = this.#streams.get(id);
        if (stream === undefined) {
          if (id >= this.#nextId || id % 2 === 0) {
            this.#connectionError(PROTOCOL_ERROR, `RST_STREAM on stream ${id}, which was never opened`);
            return;
          }
          return;
        }
        const code = payload.readUInt32BE(0);
        this.#forget(stream);
        stream.handler.onClose(
          code === REFUSED_STREAM ? CLOSE_REFUSED : CLOSE_RESET,
          code,
          `the server reset the stream (HTTP/2 ${errorName(code)})`,
        );
        this.#afterClose();
        return;
      }
      case FRAME_WINDOW_UPDATE: {
        this.#onWindowUpdate(payload, id);
        return;
      }
      case FRAME_GOAWAY: {
        this.#onGoaway(payload, id);
        return;
      }
      case FRAME_PRIORITY:
        if (id === 0) {
          this.#connectionError(PROTOCOL_ERROR, 'PRIORITY on stream 0');
          return;
        }
        if (length !== 5) {
          const stream = this.#streams.get(id);
          if (stream !== undefined)
            this.#streamError(stream, FRAME_SIZE_ERROR, `PRIORITY of ${length} bytes`);
        }
        return;
      case FRAME_PUSH_PROMISE: {
        this.#connectionError(PROTOCOL_ERROR, 'PUSH_PROMISE although push is disabled');
        return;
      }
      default:
        // Unknown frame types are ignored (RFC 9113, 5.5).
        return;
    }
  }

  #onHeadersFrame(payload: Buffer, flags: number, id: number): void {
    if (id === 0) {
      this.#connectionError(PROTOCOL_ERROR, 'HEADERS on stream 0');
      return;
    }
    let start = 0;
    let end = payload.byteLength;
    if ((flags & FLAG_PADDED) !== 0) {
      const pad = payload[0] as number;
      start = 1;
      if (pad >= end) {
        this.#connectionError(PROTOCOL_ERROR, 'HEADERS padding longer than the frame');
        return;
      }
      end -= pad;
    }
    if ((flags & FLAG_PRIORITY) !== 0) start += 5;
    if (start > end) {
      this.#connectionError(FRAME_SIZE_ERROR, 'HEADERS too short for its flags');
      return;
    }
    this.#blockStream = id;
    this.#blockEndStream = (flags & FLAG_END_STREAM) !== 0;
    this.#addBlock(payload.subarray(start, end), flags);
  }

  #addBlock(fragment: Buffer, flags: number): void {
    this.#blockSize += fragment.byteLength;
    if (this.#blockSize > MAX_HEADER_BLOCK) {
      this.#connectionError(PROTOCOL_ERROR, `a header block over ${MAX_HEADER_BLOCK} bytes`);
      return;
    }
    if ((flags & FLAG_END_HEADERS) === 0) {
      this.#blockParts.push(fragment);
      return;
    }
    const parts = this.#blockParts;
    const block = parts.length === 0 ? fragment : Buffer.concat([...parts, fragment]);
    const id = this.#blockStream;
    const endStream = this.#blockEndStream;
    this.#blockParts = [];
    this.#blockSize = 0;
    this.#blockStream = 0;
    const fields = this.#fields;
    try {
      // Every block is decoded, even a closed stream's: the table must follow the server's.
      this.#decoder.decode(block, this.#onField);
    } catch (error) {
      this.#fields = [];
      const text = error instanceof HpackError ? error.message : String(error);
      this.#connectionError(COMPRESSION_ERROR, `a header block did not decode: ${text}`);
      return;
    }
    this.#fields = [];
    const stream = this.#streams.get(id);
    if (stream === undefined) {
      if (id >= this.#nextId || id % 2 === 0) {
        this.#connectionError(PROTOCOL_ERROR, `HEADERS on stream ${id}, which was never opened`);
        return;
      }
      return;
    }
    if (stream.remoteEnded) {
      this.#streamError(stream, STREAM_CLOSED, 'HEADERS after the end of the stream');
      return;
    }
    if (stream.gotHeaders && !endStream) {
      this.#streamError(stream, PROTOCOL_ERROR, 'trailers without END_STREAM');
      return;
    }
    stream.gotHeaders = true;
    stream.handler.onHeaders(fields, endStream);
    if (endStream && stream.state === STATE_OPEN) this.#remoteEnd(stream);
  }

  #onSettings(payload: Buffer, flags: number, id: number): void {
    if (id !== 0) {
      this.#connectionError(PROTOCOL_ERROR, 'SETTINGS on a stream');
      return;
    }
    if ((flags & FLAG_ACK) !== 0) {
      if (payload.byteLength !== 0) {
        this.#connectionError(FRAME_SIZE_ERROR, 'a SETTINGS ACK with a payload');
        return;
      }
      return;
    }
    if (payload.byteLength % 6 !== 0) {
      this.#connectionError(FRAME_SIZE_ERROR, `SETTINGS of ${payload.byteLength} bytes`);
      return;
    }
    let windowGrew = false;
    for (let at = 0; at < payload.byteLength; at += 6) {
      const setting = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      switch (setting) {
        case SETTINGS_HEADER_TABLE_SIZE:
          this.#encoder.setMaxTableSize(Math.min(value, DEFAULT_HEADER_TABLE_SIZE));
          this.#heads.clear();
          this.#timeouts.clear();
          break;
        case SETTINGS_ENABLE_PUSH:
          if (value > 1) {
            this.#connectionError(PROTOCOL_ERROR, `ENABLE_PUSH ${value}`);
            return;
          }
          break;
        case SETTINGS_MAX_CONCURRENT_STREAMS:
          this.#peerMaxStreams = value;
          break;
        case SETTINGS_INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW) {
            this.#connectionError(FLOW_CONTROL_ERROR, `INITIAL_WINDOW_SIZE ${value}`);
            return;
          }
          const delta = value - this.#peerInitialWindow;
          this.#peerInitialWindow = value;
          for (const stream of this.#streams.values()) {
            stream.sendWindow += delta;
            if (stream.sendWindow > MAX_WINDOW) {
              this.#connectionError(FLOW_CONTROL_ERROR, 'INITIAL_WINDOW_SIZE overflows a stream window');
              return;
            }
          }
          if (delta > 0) windowGrew = true;
          break;
        }
        case SETTINGS_MAX_FRAME_SIZE:
          if (value < MIN_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE) {
            this.#connectionError(PROTOCOL_ERROR, `MAX_FRAME_SIZE ${value}`);
            return;
          }
          this.#peerMaxFrame = value;
          break;
        default:
          break;
      }
    }
    this.#write(frame(FRAME_SETTINGS, FLAG_ACK, 0));
    if (windowGrew) for (const stream of [...this.#streams.values()]) this.#resumeSending(stream);
    this.#startWaiting();
    if (!this.#ready) {
      this.#ready = true;
      this.#events.onReady();
    }
  }

  #onWindowUpdate(payload: Buffer, id: number): void {
    if (payload.byteLength !== 4) {
      this.#connectionError(FRAME_SIZE_ERROR, `WINDOW_UPDATE of ${payload.byteLength} bytes`);
      return;
    }
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) {
        this.#connectionError(PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
        return;
      }
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) {
        this.#connectionError(FLOW_CONTROL_ERROR, 'the connection window went over 2^31-1');
        return;
      }
      const blocked = this.#blocked;
      this.#blocked = [];
      for (const stream of blocked) {
        stream.blocked = false;
        this.#resumeSending(stream);
      }
      return;
    }
    const stream = this.#streams.get(id);
    if (stream === undefined) return;
    if (increment === 0) {
      this.#streamError(stream, PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      return;
    }
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) {
      this.#streamError(stream, FLOW_CONTROL_ERROR, 'the stream window went over 2^31-1');
      return;
    }
    this.#resumeSending(stream);
  }

  #resumeSending(stream: SessionStream): void {
    if (stream.state !== STATE_OPEN || stream.remaining === 0 || stream.blocked) return;
    const corkHere = this.#policy === 'now';
    if (corkHere) this.#socket.cork();
    this.#sendData(stream);
    if (corkHere) this.#socket.uncork();
  }

  #onGoaway(payload: Buffer, id: number): void {
    if (id !== 0) {
      this.#connectionError(PROTOCOL_ERROR, 'GOAWAY on a stream');
      return;
    }
    if (payload.byteLength < 8) {
      this.#connectionError(FRAME_SIZE_ERROR, 'GOAWAY under 8 bytes');
      return;
    }
    const last = payload.readUInt32BE(0) & 0x7fffffff;
    const code = payload.readUInt32BE(4);
    const debug = payload.toString('utf8', 8, Math.min(payload.byteLength, 8 + 200));
    const text = `the server sent GOAWAY (${errorName(code)}${debug === '' ? '' : `: ${debug}`})`;
    if (code !== NO_ERROR) this.#error ??= new Error(text);
    const refused = [...this.#streams.values()].filter((stream) => stream.id > last);
    this.#drain(`${text}; the call was not sent`);
    for (const stream of refused) {
      this.#forget(stream);
      stream.handler.onClose(CLOSE_REFUSED, code, `${text}; the call was not processed`);
    }
    this.#afterClose();
  }

  // ---- stream and connection ends ----

  #remoteEnd(stream: SessionStream): void {
    stream.remoteEnded = true;
    if (!stream.localEnded) {
      // The server answered before our request was all sent (an early error): stop sending.
      this.#write(frame32(FRAME_RST_STREAM, stream.id, CANCEL));
    }
    this.#forget(stream);
    stream.handler.onClose(CLOSE_END, 0, '');
    this.#afterClose();
  }

  #forget(stream: SessionStream): void {
    stream.state = STATE_CLOSED;
    stream.body = [];
    this.#streams.delete(stream.id);
  }

  /** A stream closed: start a waiting one, or end a draining connection with nothing left. */
  #afterClose(): void {
    if (this.#done) return;
    if (this.#draining) {
      if (this.#streams.size === 0) this.#socket.end();
      return;
    }
    this.#startWaiting();
  }

  #startWaiting(): void {
    const waiting = this.#waiting;
    while (
      waiting.length > 0 &&
      this.#streams.size < this.#peerMaxStreams &&
      !this.#draining &&
      !this.#done
    ) {
      const stream = waiting.shift() as SessionStream;
      if (stream.state === STATE_WAITING) this.#open(stream);
    }
  }

  /** No new streams here: calls still waiting fail (never sent, so safe to retry elsewhere). */
  #drain(why = 'the connection ran out of stream ids; the call was not sent'): void {
    if (this.#draining || this.#done) return;
    this.#draining = true;
    this.#events.onDraining();
    for (const stream of this.#waiting.splice(0)) {
      if (stream.state !== STATE_WAITING) continue;
      stream.state = STATE_CLOSED;
      stream.handler.onClose(CLOSE_REFUSED, 0, why);
    }
    if (this.#streams.size === 0) this.#socket.end();
  }

  /** A protocol violation's text: before the server spoke HTTP/2 it is not an HTTP/2 server at all. */
  #violation(text: string, code: number): string {
    return this.#ready
      ? `HTTP/2 protocol error from the server: ${text} (${errorName(code)})`
      : `Protocol error: ${text} (HTTP/2 ${errorName(code)})`;
  }

  #streamError(stream: SessionStream, code: number, text: string): void {
    this.#forget(stream);
    this.#write(frame32(FRAME_RST_STREAM, stream.id, code));
    stream.handler.onClose(CLOSE_PROTOCOL, code, this.#violation(text, code));
    this.#afterClose();
  }

  /** The server broke the protocol: GOAWAY with `code`, and every call on the connection fails. */
  #connectionError(code: number, text: string): void {
    if (this.#done) return;
    const message = this.#violation(text, code);
    this.#error = new Error(message);
    const debug = Buffer.from(text, 'utf8');
    const payload = Buffer.allocUnsafe(8 + debug.byteLength);
    payload.writeUInt32BE(this.#lastPeerStream, 0);
    payload.writeUInt32BE(code, 4);
    debug.copy(payload, 8);
    this.uncork();
    const socket = this.#socket;
    socket.end(frame(FRAME_GOAWAY, 0, 0, payload));
    // Closed whatever the server does next (it may never read).
    setTimeout(() => socket.destroy(), 1000).unref();
    this.#terminate(this.#error, CLOSE_PROTOCOL, code);
  }

  #terminate(error: Error | undefined, kind = CLOSE_LOST, code = 0): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#pingTimer);
    this.#pingPayload = undefined;
    const message =
      error?.message ??
      (this.#ready
        ? 'the server closed the connection'
        : 'Failed to connect (the connection closed before the server spoke HTTP/2)');
    const streams = [...this.#streams.values(), ...this.#waiting];
    this.#streams.clear();
    this.#waiting.length = 0;
    this.#blocked = [];
    if (kind !== CLOSE_PROTOCOL) this.#socket.destroy();
    for (const stream of streams) {
      if (stream.state === STATE_CLOSED) continue;
      stream.state = STATE_CLOSED;
      stream.handler.onClose(kind, code, message);
    }
    this.#events.onClose(error);
  }
}

const EMPTY = Buffer.alloc(0);
