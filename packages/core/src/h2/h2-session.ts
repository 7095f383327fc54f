// A lean HTTP/2 client session (RFC 9113) over one socket, for gRPC calls. No stream objects or
// events per call: each stream reports to a `StreamHandler` (the call itself). This file holds the
// session's life (starting streams, ending them, draining, failing); each of its parts, one concern
// of the protocol, has a module of its own (decision 0017 lists them).
import type { Socket } from 'node:net';
import { FrameHandler } from './h2-frame-handler.js';
import { FrameReader } from './h2-frame-reader.js';
import { CANCEL, errorName, FRAME_RST_STREAM, frame32, goawayFrame, NO_ERROR } from './h2-frame-types.js';
import { FrameWriter } from './h2-frame-writer.js';
import { HeaderBlockReader } from './h2-header-block-reader.js';
import { KeepalivePing } from './h2-keepalive-ping.js';
import { ReceiveWindow } from './h2-receive-window.js';
import { RequestHeaders } from './h2-request-headers.js';
import { RequestSender } from './h2-request-sender.js';
import {
  DEFAULT_MAX_WAITING,
  DEFAULT_SETTINGS_TIMEOUT_MS,
  type H2SessionEvents,
  type H2SessionOptions,
} from './h2-session-options.js';
import { clientPreface, PeerSettings } from './h2-settings.js';
import {
  CLOSE_END,
  CLOSE_HEADERS_TOO_LARGE,
  CLOSE_LOST,
  CLOSE_PROTOCOL,
  CLOSE_REFUSED,
  SessionStream,
  STATE_CLOSED,
  STATE_OPEN,
  STATE_WAITING,
  type StreamHandler,
} from './h2-stream.js';
import { StreamTable } from './h2-stream-table.js';

/** A connection without streams for this long (ms) is idle: its next request is written at once. */
const IDLE_MS = 5;

/** How long a socket we ended may wait for the server to close its side before we close it. */
const CLOSE_GRACE_MS = 1000;

function onSettingsTimeout(session: H2Session, timeoutMs: number): void {
  session.destroy(new Error(`Failed to connect (no HTTP/2 SETTINGS from the server within ${timeoutMs} ms)`));
}

function destroySocket(socket: Socket): void {
  socket.destroy();
}

/**
 * One HTTP/2 client connection. The caller dials the socket (net or tls) and hands it over at once;
 * the session writes the preface and its SETTINGS before anything else.
 */
export class H2Session {
  readonly #socket: Socket;
  readonly #events: H2SessionEvents;
  readonly #table: StreamTable;
  readonly #writer: FrameWriter;
  readonly #peer = new PeerSettings();
  readonly #requestHeaders: RequestHeaders;
  readonly #sender: RequestSender;
  readonly #receive: ReceiveWindow;
  readonly #ping: KeepalivePing;
  readonly #reader: FrameReader;
  #ready = false;
  #draining = false;
  #done = false;
  #ending = false;
  #error: Error | undefined;
  #settingsTimer: NodeJS.Timeout | undefined;
  /**
   * When the last open stream ended (performance.now()). A request opened within IDLE_MS of it is a
   * caller answered and sending again, perhaps with others answered by the same read: it waits for
   * the turn's other writes, so that they leave in one. (A clock reading, not a setImmediate per
   * emptying: that added a loop iteration to every call of a lone caller.)
   */
  #emptiedAt = Number.NEGATIVE_INFINITY;

  constructor(socket: Socket, options: H2SessionOptions) {
    this.#socket = socket;
    this.#events = options.events;
    this.#table = new StreamTable(options.firstStreamId ?? 1, options.maxWaiting ?? DEFAULT_MAX_WAITING);
    const writer = new FrameWriter(socket, options.writePolicy ?? 'microtask');
    this.#writer = writer;
    const requestHeaders = new RequestHeaders(options.scheme, options.authority);
    this.#requestHeaders = requestHeaders;
    this.#sender = new RequestSender(writer, this.#peer, requestHeaders);
    this.#receive = new ReceiveWindow(writer);
    this.#ping = new KeepalivePing(writer, (error) => this.destroy(error));
    this.#reader = new FrameReader(
      new FrameHandler({
        session: this,
        table: this.#table,
        writer,
        sender: this.#sender,
        receive: this.#receive,
        headerBlocks: new HeaderBlockReader(),
        requestHeaders,
        peer: this.#peer,
        ping: this.#ping,
      }),
    );
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.#reader.read(chunk));
    // The connection is over at the first sign, not at the socket's 'close': that comes after our
    // side's shutdown has been written, an event-loop iteration later (1 ms median in the failover
    // benchmark). A socket error is a reset (a crashed server that left unread bytes behind resets
    // rather than ends). The server's end of stream (its FIN) is the end too, whether or not streams
    // are open and whether or not a GOAWAY came first: HTTP/2 has no half-closed connection, so
    // nothing can arrive here any more for a stream open now or opened later; for a crashed
    // server it is the earliest sign this process gets. Frames read with the FIN were handled
    // before it ('data' comes first).
    socket.on('error', (error: Error) => {
      this.#error ??= error;
      this.#terminate(this.#error, CLOSE_LOST, 0, true);
    });
    socket.on('end', () => this.#terminate(this.#error, CLOSE_LOST, 0, true));
    socket.on('close', () => this.#terminate(this.#error));
    socket.write(clientPreface());
    const settingsTimeoutMs = options.settingsTimeoutMs ?? DEFAULT_SETTINGS_TIMEOUT_MS;
    this.#settingsTimer = setTimeout(onSettingsTimeout, settingsTimeoutMs, this, settingsTimeoutMs);
    this.#settingsTimer.unref();
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
    return this.#table.count;
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
    if (this.#table.admit(stream, this.#peer.maxStreams)) this.#open(stream);
    return stream;
  }

  /** Ends a stream from our side (RST_STREAM `code`); its handler hears nothing more. */
  reset(stream: SessionStream, code = CANCEL): void {
    if (stream.state === STATE_WAITING) {
      stream.state = STATE_CLOSED;
      this.#table.removeWaiting(stream);
      return;
    }
    if (stream.state !== STATE_OPEN) return;
    this.#forget(stream);
    if (!this.#done) this.#writer.write(frame32(FRAME_RST_STREAM, stream.id, code));
    this.#afterClose();
  }

  /** Stops crediting the stream's receive window (the server then stops once it is used up). */
  pause(stream: SessionStream): void {
    this.#receive.pause(stream);
  }

  resume(stream: SessionStream): void {
    this.#receive.resume(stream);
  }

  /**
   * Sends a PING; `onAnswer` when the ACK comes. Not answered within `timeoutMs`, the session is
   * destroyed. False if a ping is already out or the session is over.
   */
  ping(timeoutMs: number, onAnswer?: () => void): boolean {
    if (this.#done || this.#ping.pending) return false;
    this.#ping.send(timeoutMs, onAnswer);
    return true;
  }

  /** Closes the socket at once; every stream fails with `error`'s text. */
  destroy(error?: Error): void {
    if (error !== undefined) this.#error ??= error;
    this.#terminate(this.#error);
  }

  /** Flushes writes held by the `microtask`/`immediate` policies. */
  uncork(): void {
    this.#writer.uncork();
  }

  // ---- for the frame handler ----

  /** The server's SETTINGS were applied: waiting calls may start, and the first makes us ready. */
  settingsApplied(): void {
    this.#startWaiting();
    if (!this.#ready) {
      clearTimeout(this.#settingsTimer);
      this.#ready = true;
      this.#events.onReady();
    }
  }

  /** The server ended the stream (END_STREAM). */
  remoteEnd(stream: SessionStream): void {
    stream.remoteEnded = true;
    if (!stream.localEnded) {
      // The server answered before our request was all sent (an early error): stop sending.
      this.#writer.write(frame32(FRAME_RST_STREAM, stream.id, CANCEL));
    }
    this.endStream(stream, CLOSE_END, 0, '');
  }

  /** The stream is over for the reason `kind` gives; its handler hears it. */
  endStream(stream: SessionStream, kind: number, code: number, message: string): void {
    this.#forget(stream);
    stream.handler.onClose(kind, code, message);
    this.#afterClose();
  }

  /** GOAWAY: no new streams here, and those above `lastId` were not processed (safe to retry). */
  goaway(lastId: number, code: number, text: string): void {
    if (code !== NO_ERROR) this.#error ??= new Error(text);
    const refused = this.#table.openAbove(lastId);
    this.#drain(`${text}; the call was not sent`);
    for (const stream of refused) {
      this.#forget(stream);
      stream.handler.onClose(CLOSE_REFUSED, code, `${text}; the call was not processed`);
    }
    this.#afterClose();
  }

  /** The server broke the protocol on one stream: RST_STREAM with `code`, the call fails. */
  streamError(stream: SessionStream, code: number, text: string): void {
    this.#forget(stream);
    this.#writer.write(frame32(FRAME_RST_STREAM, stream.id, code));
    stream.handler.onClose(CLOSE_PROTOCOL, code, this.#violation(text, code));
    this.#afterClose();
  }

  /** The server broke the protocol: GOAWAY with `code`, and every call on the connection fails. */
  connectionError(code: number, text: string): void {
    if (this.#done) return;
    const message = this.#violation(text, code);
    this.#error = new Error(message);
    this.#writer.uncork();
    const socket = this.#socket;
    // The last stream the server opened: it opens none (no push), so 0.
    socket.end(goawayFrame(0, code, text));
    // Closed whatever the server does next (it may never read).
    setTimeout(destroySocket, CLOSE_GRACE_MS, socket).unref();
    this.#terminate(this.#error, CLOSE_PROTOCOL, code);
  }

  // ---- streams and the connection's end ----

  #open(stream: SessionStream): void {
    const table = this.#table;
    const limit = this.#peer.maxHeaderList;
    const tooLarge =
      limit === Number.POSITIVE_INFINITY ? undefined : this.#requestHeaders.overLimit(stream, limit);
    if (tooLarge !== undefined) {
      stream.state = STATE_CLOSED;
      stream.handler.onClose(CLOSE_HEADERS_TOO_LARGE, 0, tooLarge);
      return;
    }
    if (table.idsSpent) {
      // Stream ids are spent: this connection takes no more; the caller's next call dials anew.
      stream.state = STATE_CLOSED;
      this.#drain();
      stream.handler.onClose(CLOSE_REFUSED, 0, 'the connection ran out of stream ids');
      return;
    }
    table.add(stream);
    // The last id: this connection takes no more streams once this one is sent.
    if (table.idsSpent) queueMicrotask(() => this.#drain());
    stream.state = STATE_OPEN;
    stream.sendWindow = this.#peer.initialWindow;
    // The only stream on a connection idle since an earlier turn (a failover's first call to the
    // survivor): its bytes leave now, not after the rest of the turn.
    this.#sender.send(stream, table.open.size === 1 && performance.now() - this.#emptiedAt >= IDLE_MS);
  }

  #forget(stream: SessionStream): void {
    stream.state = STATE_CLOSED;
    stream.body = [];
    const table = this.#table;
    table.delete(stream);
    if (table.open.size === 0) this.#emptiedAt = performance.now();
  }

  /** A stream closed: start a waiting one, or end a draining connection with nothing left. */
  #afterClose(): void {
    if (this.#done) return;
    if (this.#draining) {
      if (this.#table.open.size === 0) this.#endSocket();
      return;
    }
    this.#startWaiting();
  }

  #startWaiting(): void {
    while (!this.#draining && !this.#done) {
      const stream = this.#table.next(this.#peer.maxStreams);
      if (stream === undefined) return;
      this.#open(stream);
    }
  }

  /** No new streams here: calls still waiting fail (never sent, so safe to retry elsewhere). */
  #drain(why = 'the connection ran out of stream ids; the call was not sent'): void {
    if (this.#draining || this.#done) return;
    this.#draining = true;
    this.#events.onDraining();
    this.#table.refuseWaiting(why);
    if (this.#table.open.size === 0) this.#endSocket();
  }

  /** Ends our side once nothing runs here; closes the socket if the server does not close its side. */
  #endSocket(): void {
    if (this.#ending) return;
    this.#ending = true;
    this.#socket.end();
    setTimeout(destroySocket, CLOSE_GRACE_MS, this.#socket).unref();
  }

  /** A protocol violation's text: before the server spoke HTTP/2 it is not an HTTP/2 server at all. */
  #violation(text: string, code: number): string {
    return this.#ready
      ? `HTTP/2 protocol error from the server: ${text} (${errorName(code)})`
      : `Protocol error: ${text} (HTTP/2 ${errorName(code)})`;
  }

  /** `byPeer`: the server ended or reset the connection (the socket's 'end' or 'error'). */
  #terminate(error: Error | undefined, kind = CLOSE_LOST, code = 0, byPeer = false): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#settingsTimer);
    this.#reader.stop();
    this.#ping.cancel();
    const message =
      error?.message ??
      (this.#ready
        ? 'the server closed the connection'
        : 'Failed to connect (the connection closed before the server spoke HTTP/2)');
    this.#sender.clear();
    const streams = this.#table.count;
    this.#table.closeAll(kind, code, message);
    this.#events.onClose(error, streams);
    // Last: the calls' failures and the connection's loss are reported first (a failover moves
    // them on from there), and tearing the socket down (0.03–0.33 ms in the failover benchmark) does
    // not delay them. When the server ended or reset the connection, the teardown also waits for
    // what the report set off in this turn (the first call's move to another endpoint runs in the
    // microtasks that follow) — on a socket that allows half-open connections (the plaintext one),
    // since on another Node half-closes it itself in a process.nextTick, ahead of those microtasks,
    // and that costs the move more than the teardown (measured: docs/benchmarks/router-log.md, failover gap,
    // seventh pass). Nothing more is read or written here meanwhile: the reader is stopped.
    if (kind === CLOSE_PROTOCOL) return;
    if (byPeer && this.#socket.allowHalfOpen) setImmediate(destroySocket, this.#socket);
    else this.#socket.destroy();
  }
}
