import type { GrpcStatusLike } from '../grpc-status.js';
import { clearLongTimer, type LongTimer, setLongTimeout } from '../internal/long-timer.js';
import { FrameError, type MessageAllocator, MessageReader } from './grpc-frames.js';
import type { H2Connection } from './h2-connection.js';
import type { H2Session } from './h2-session.js';
import {
  CLOSE_BUSY,
  CLOSE_END,
  CLOSE_HEADERS_TOO_LARGE,
  CLOSE_PROTOCOL,
  CLOSE_REFUSED,
  CLOSE_RESET,
  type SessionStream,
  type StreamHandler,
} from './h2-stream.js';

/** The status a call ended with, as grpc-js reports it (so one error mapping serves both engines). */
export interface H2Status extends GrpcStatusLike {
  code: number;
  details: string;
  /** Trailing metadata (lower-case keys), `grpc-status-details-bin` decoded from base64. */
  metadata: Record<string, string | Buffer>;
}

export interface H2CallOptions {
  /** `/package.Service/Method`. */
  path: string;
  /** Metadata to send (lower-case keys, visible-ASCII values). */
  headers: Record<string, string>;
  /**
   * Relative deadline in ms; sent as grpc-timeout and enforced here, beyond setTimeout's 2^31 − 1 ms
   * too. Never Infinity: the transport turns that into undefined (no deadline).
   */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  maxMessageBytes: number;
  /**
   * Where the response messages' memory comes from (a `MessagePool` for an answer whose outputs all
   * go into the caller's memory). @default Buffer.allocUnsafe
   */
  allocate?: MessageAllocator | undefined;
}

export interface H2Call {
  /** Stops reading (HTTP/2 flow control then holds the server back). */
  pause(): void;
  resume(): void;
  /** Ends the call with CANCELLED. */
  cancel(): void;
}

/** gRPC's mapping of HTTP statuses for answers that carry no grpc-status (PROTOCOL-HTTP2.md). */
function statusOfHttp(status: number): number {
  switch (status) {
    case 400:
      return 13;
    case 401:
      return 16;
    case 403:
      return 7;
    case 404:
      return 12;
    case 429:
    case 502:
    case 503:
    case 504:
      return 14;
    default:
      return 2;
  }
}

/** gRPC's mapping of a server's RST_STREAM code (as grpc-js reads it). */
function statusOfReset(code: number): number {
  switch (code) {
    case 7: // REFUSED_STREAM: not processed
      return 14;
    case 8: // CANCEL
      return 1;
    case 11: // ENHANCE_YOUR_CALM
      return 8;
    case 12: // INADEQUATE_SECURITY
      return 7;
    default:
      return 13;
  }
}

function formatTimeout(ms: number): string {
  const rounded = Math.max(1, Math.ceil(ms));
  return rounded < 1e8 ? `${rounded}m` : `${Math.min(99_999_999, Math.ceil(rounded / 1000))}S`;
}

// Calls usually share one deadline (the client's timeoutMs): its header text is made once.
let lastTimeoutMs = -1;
let lastTimeoutText = '';
function grpcTimeout(ms: number): string {
  if (ms !== lastTimeoutMs) {
    lastTimeoutText = formatTimeout(ms);
    lastTimeoutMs = ms;
  }
  return lastTimeoutText;
}

function decodeMessage(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Header fields (names and values alternating) as metadata: pseudo-headers left out, repeats joined. */
function metadataOf(fields: readonly string[]): Record<string, string | Buffer> {
  const text: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) {
    const key = fields[i] as string;
    if (key.startsWith(':')) continue;
    const value = fields[i + 1] as string;
    const before = text[key];
    text[key] = before === undefined ? value : `${before},${value}`;
  }
  const metadata: Record<string, string | Buffer> = {};
  for (const [key, value] of Object.entries(text)) {
    metadata[key] = key.endsWith('-bin') ? Buffer.from(value, 'base64') : value;
  }
  return metadata;
}

/**
 * A status read from trailers (or a trailers-only answer). Its metadata is decoded when first read:
 * an OK unary call, the usual case, never reads it.
 */
class ReceivedStatus implements H2Status {
  readonly code: number;
  readonly details: string;
  #fields: readonly string[] | undefined;
  #metadata: Record<string, string | Buffer> | undefined;

  constructor(code: number, details: string, fields: readonly string[]) {
    this.code = code;
    this.details = details;
    this.#fields = fields;
  }

  get metadata(): Record<string, string | Buffer> {
    if (this.#metadata === undefined) {
      this.#metadata = metadataOf(this.#fields as readonly string[]);
      this.#fields = undefined;
    }
    return this.#metadata;
  }
}

/** The status in a header block, if it has `grpc-status`. */
function statusOf(fields: readonly string[]): H2Status | undefined {
  let raw: string | undefined;
  let message: string | undefined;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === 'grpc-status') raw ??= fields[i + 1];
    else if (name === 'grpc-message') message ??= fields[i + 1];
  }
  if (raw === undefined) return undefined;
  const details = message === undefined ? '' : decodeMessage(message);
  // The usual trailer of a good call, without Number() and a range check.
  if (raw === '0') return new ReceivedStatus(0, details, fields);
  const code = Number(raw);
  return new ReceivedStatus(Number.isInteger(code) && code >= 0 && code <= 16 ? code : 2, details, fields);
}

/** The `:status` of a response header block (0 if none). */
function httpStatusOf(fields: readonly string[]): number {
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === ':status') return Number(fields[i + 1]) || 0;
  }
  return 0;
}

const NOOP_CALL: H2Call = { pause() {}, resume() {}, cancel() {} };

function onDeadline(call: ClientCall): void {
  call.stop(4, 'Deadline exceeded');
}

/**
 * One call: the session's handler for its stream, its deadline timer and abort listener (itself,
 * as an EventListener object), and the handle the engine pauses, resumes and cancels.
 */
class ClientCall implements StreamHandler, H2Call {
  #connection: H2Connection;
  readonly #reroute: Reroute | undefined;
  /** Times the call moved to another endpoint after a failed dial. */
  #rerouted = 0;
  readonly #onEnd: (status: H2Status) => void;
  readonly #signal: AbortSignal | undefined;
  readonly #reader: MessageReader;
  #session: H2Session | undefined;
  #stream: SessionStream | undefined;
  #timer: LongTimer | undefined;
  #ended = false;
  #local: H2Status | undefined;
  #remote: H2Status | undefined;
  #httpStatus = 0;
  #sawHeaders = false;
  #body: readonly Uint8Array[] = [];
  #options: H2CallOptions | undefined;
  /** performance.now() at the deadline, if there is one. */
  #deadlineAt: number | undefined;
  /** Bumped by each send, so a send started inside another's refusal is the one that counts. */
  #attempt = 0;
  #retried = false;

  constructor(
    connection: H2Connection,
    options: H2CallOptions,
    onMessage: (message: Buffer) => void,
    onEnd: (status: H2Status) => void,
    reroute: Reroute | undefined,
  ) {
    this.#connection = connection;
    this.#reroute = reroute;
    this.#onEnd = onEnd;
    this.#signal = options.signal;
    this.#reader = new MessageReader(
      options.maxMessageBytes,
      onMessage,
      options.allocate === undefined ? {} : { allocate: options.allocate },
    );
  }

  start(body: readonly Uint8Array[], options: H2CallOptions): void {
    this.#body = body;
    this.#options = options;
    if (options.timeoutMs !== undefined) {
      this.#deadlineAt = performance.now() + options.timeoutMs;
      this.#timer = setLongTimeout(onDeadline, options.timeoutMs, this);
    }
    this.#signal?.addEventListener('abort', this, { once: true });
    this.#send(options.timeoutMs === undefined ? undefined : grpcTimeout(options.timeoutMs));
  }

  #send(timeout: string | undefined): void {
    const options = this.#options as H2CallOptions;
    let session: H2Session;
    try {
      session = this.#connection.session();
    } catch (error) {
      this.#finish({
        code: 14,
        details: `could not start the call: ${(error as Error).message}`,
        metadata: {},
      });
      return;
    }
    this.#session = session;
    const attempt = ++this.#attempt;
    const stream = session.request(this, options.path, options.headers, timeout, this.#body);
    if (!this.#ended && this.#attempt === attempt) this.#stream = stream;
  }

  /**
   * The server did not process the call (GOAWAY above its stream, REFUSED_STREAM, or the connection
   * could take no more streams): it goes once more, on the connection's current session (a fresh one
   * after GOAWAY), within the same deadline, as gRPC's transparent retry does. False if it may not.
   */
  #retry(): boolean {
    if (this.#retried || this.#sawHeaders || this.#local !== undefined) return false;
    this.#retried = true;
    this.#stream = undefined;
    return this.#resend();
  }

  /** Sends the call again with what is left of its deadline; false if nothing is left. */
  #resend(): boolean {
    const left = this.#deadlineAt === undefined ? undefined : this.#deadlineAt - performance.now();
    if (left !== undefined && left <= 0) return false;
    this.#send(left === undefined ? undefined : grpcTimeout(left));
    return true;
  }

  /**
   * The connection the call was waiting on failed to dial (its session never became ready, so the
   * server cannot have seen the request): the call moves to another endpoint that can take it, if
   * the engine has one, within the same deadline. Each endpoint is tried at most once per call.
   */
  #rerouteAfterFailedDial(): boolean {
    const reroute = this.#reroute;
    if (reroute === undefined || this.#sawHeaders || this.#local !== undefined) return false;
    if (this.#session?.ready === true) return false;
    if (this.#rerouted >= reroute.limit) return false;
    const next = reroute.next(this.#connection);
    if (next === undefined) return false;
    this.#rerouted++;
    this.#stream = undefined;
    this.#session = undefined;
    this.#connection.leave();
    next.enter();
    this.#connection = next;
    return this.#resend();
  }

  /** The signal's abort. */
  handleEvent(): void {
    this.stop(1, 'Cancelled on client');
  }

  stop(code: number, details: string): void {
    if (this.#ended) return;
    this.#local ??= { code, details, metadata: {} };
    if (this.#stream !== undefined) this.#session?.reset(this.#stream);
    this.#finish(this.#local);
  }

  pause(): void {
    if (this.#stream !== undefined) this.#session?.pause(this.#stream);
  }

  resume(): void {
    if (this.#stream !== undefined) this.#session?.resume(this.#stream);
  }

  cancel(): void {
    this.stop(1, 'Cancelled on client');
  }

  onHeaders(fields: string[], endStream: boolean): void {
    if (!this.#sawHeaders) {
      this.#sawHeaders = true;
      this.#httpStatus = httpStatusOf(fields);
      // A trailers-only answer (an error before any message) carries the status in the headers.
      this.#remote ??= statusOf(fields);
      return;
    }
    if (endStream) this.#remote = statusOf(fields) ?? this.#remote;
  }

  onData(data: Buffer): void {
    if (this.#ended) return;
    try {
      this.#reader.push(data);
    } catch (error) {
      if (error instanceof FrameError) this.stop(error.status, error.message);
      else this.stop(13, `reading the answer failed: ${(error as Error).message}`);
    }
  }

  onClose(kind: number, code: number, message: string): void {
    if (this.#ended) return;
    const remote = this.#remote;
    if (kind === CLOSE_END && remote !== undefined) {
      if (remote.code === 0 && this.#reader.partial) {
        this.#finish({ code: 15, details: 'the stream ended inside a message', metadata: remote.metadata });
        return;
      }
      this.#finish(remote);
      return;
    }
    const httpStatus = this.#httpStatus;
    if (kind === CLOSE_END && httpStatus !== 0 && httpStatus !== 200) {
      this.#finish({
        code: statusOfHttp(httpStatus),
        details: `the server answered HTTP ${httpStatus}`,
        metadata: {},
      });
      return;
    }
    if (kind === CLOSE_BUSY) {
      this.#finish({ code: 8, details: message, metadata: {} });
      return;
    }
    if (kind === CLOSE_HEADERS_TOO_LARGE) {
      // Metadata the server refuses to take: resending cannot help (INVALID_ARGUMENT).
      this.#finish({ code: 3, details: message, metadata: {} });
      return;
    }
    if (kind === CLOSE_REFUSED) {
      if (this.#retry()) return;
      this.#finish({ code: 14, details: message, metadata: {} });
      return;
    }
    if (kind === CLOSE_RESET) {
      this.#finish({
        code: statusOfReset(code),
        details: `Received RST_STREAM with code ${code}`,
        metadata: {},
      });
      return;
    }
    if (kind === CLOSE_PROTOCOL && this.#session?.ready === true) {
      this.#finish({ code: 13, details: message, metadata: {} });
      return;
    }
    if (this.#rerouteAfterFailedDial()) return;
    const text = kind === CLOSE_END ? 'the stream ended without a gRPC status' : message;
    // grpc-js's wording, which the error mapping (and the wrong-port probe) recognise.
    this.#finish({
      code: 14,
      details: this.#sawHeaders
        ? `Connection dropped: ${text}`
        : `No connection established. Last error: ${text}`,
      metadata: {},
    });
  }

  #finish(status: H2Status): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stream = undefined;
    clearLongTimer(this.#timer);
    this.#signal?.removeEventListener('abort', this);
    this.#connection.leave();
    this.#onEnd(status);
  }
}

/** Where a call goes when its connection fails to dial: the engine's other endpoints. */
export interface Reroute {
  /** Another connection that can take the call (ready, or not failing), or undefined. */
  next(failed: H2Connection): H2Connection | undefined;
  /** Most moves per call (the number of other endpoints). */
  readonly limit: number;
}

/**
 * Starts one gRPC call on `connection`: sends `body` (the 5-byte-prefixed request, as chunks) and
 * half-closes, hands each response message to `onMessage`, then `onEnd` once with the status.
 * Deadline, abort and every way the stream can fail end in exactly one status.
 */
export function startH2Call(
  connection: H2Connection,
  body: readonly Uint8Array[],
  options: H2CallOptions,
  onMessage: (message: Buffer) => void,
  onEnd: (status: H2Status) => void,
  reroute?: Reroute,
): H2Call {
  connection.enter();
  const call = new ClientCall(connection, options, onMessage, onEnd, reroute);
  // Aborted while the request was being prepared (compression is asynchronous): never start it.
  if (options.signal?.aborted) {
    call.stop(1, 'Cancelled on client');
    return NOOP_CALL;
  }
  call.start(body, options);
  return call;
}
