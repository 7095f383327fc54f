// One HTTP/2 stream of a session: what the call asked to send, its flow-control windows, its state,
// and the handler it reports to. No events and no per-stream closures: the session calls the
// handler (the call itself) directly.
import { STREAM_WINDOW } from './h2-settings.js';

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
/** The request's header list is over the server's SETTINGS_MAX_HEADER_LIST_SIZE: it was not sent. */
export const CLOSE_HEADERS_TOO_LARGE = 6;

/** What a stream tells its call. Called synchronously from the socket's reads. */
export interface StreamHandler {
  /** A header block: names and values alternating. The first is the response's, any later the trailers. */
  onHeaders(fields: string[], endStream: boolean): void;
  /**
   * Response bytes, a view of the received chunk, valid only during the call: the connection reads
   * the socket into one reused buffer, so a handler copies what it keeps.
   */
  onData(data: Buffer): void;
  /** The stream is over: once, unless the call reset it itself. */
  onClose(kind: number, code: number, message: string): void;
}

/** Waiting for the server's MAX_CONCURRENT_STREAMS to let it start. */
export const STATE_WAITING = 0;
export const STATE_OPEN = 1;
export const STATE_CLOSED = 2;

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
