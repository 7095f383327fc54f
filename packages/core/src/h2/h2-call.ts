import type { ClientHttp2Stream, IncomingHttpHeaders, IncomingHttpStatusHeader } from 'node:http2';
import type { GrpcStatusLike } from '../grpc-status.js';
import { FrameError, MessageReader } from './grpc-frames.js';
import type { H2Connection } from './h2-connection.js';

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
  /** Relative deadline in ms; sent as grpc-timeout and enforced here. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  maxMessageBytes: number;
}

export interface H2Call {
  /** Stops reading (HTTP/2 flow control then holds the server back). */
  pause(): void;
  resume(): void;
  /** Ends the call with CANCELLED. */
  cancel(): void;
}

const NGHTTP2_CANCEL = 8;

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

/** What `session.request` is given each time (it copies the object, never keeps or changes it). */
const REQUEST_OPTIONS = Object.freeze({ endStream: false });

function decodeMessage(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function metadataOf(headers: IncomingHttpHeaders): Record<string, string | Buffer> {
  const metadata: Record<string, string | Buffer> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (key.startsWith(':') || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    metadata[key] = key.endsWith('-bin') ? Buffer.from(text, 'base64') : text;
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
  #headers: IncomingHttpHeaders | undefined;
  #metadata: Record<string, string | Buffer> | undefined;

  constructor(code: number, details: string, headers: IncomingHttpHeaders) {
    this.code = code;
    this.details = details;
    this.#headers = headers;
  }

  get metadata(): Record<string, string | Buffer> {
    if (this.#metadata === undefined) {
      this.#metadata = metadataOf(this.#headers as IncomingHttpHeaders);
      this.#headers = undefined;
    }
    return this.#metadata;
  }
}

function statusOf(headers: IncomingHttpHeaders): H2Status | undefined {
  const raw = headers['grpc-status'];
  if (raw === undefined) return undefined;
  // The usual trailer of a good call, without Number() and a range check.
  if (raw === '0') return new ReceivedStatus(0, detailsOf(headers), headers);
  const code = Number(Array.isArray(raw) ? raw[0] : raw);
  return new ReceivedStatus(
    Number.isInteger(code) && code >= 0 && code <= 16 ? code : 2,
    detailsOf(headers),
    headers,
  );
}

function detailsOf(headers: IncomingHttpHeaders): string {
  const message = headers['grpc-message'];
  return typeof message === 'string' ? decodeMessage(message) : '';
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
): H2Call {
  let ended = false;
  let stream: ClientHttp2Stream | undefined;
  let timer: NodeJS.Timeout | undefined;
  let local: H2Status | undefined;
  let remote: H2Status | undefined;
  let httpStatus = 0;
  let streamError: Error | undefined;
  const { signal } = options;

  const finish = (status: H2Status) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    connection.leave();
    onEnd(status);
  };
  const stop = (code: number, details: string) => {
    local ??= { code, details, metadata: {} };
    if (stream !== undefined && !stream.closed) stream.close(NGHTTP2_CANCEL);
    else finish(local);
  };
  function onAbort(): void {
    stop(1, 'Cancelled on client');
  }

  connection.enter();
  // Aborted while the request was being prepared (compression is asynchronous): never start it.
  if (signal?.aborted) {
    finish({ code: 1, details: 'Cancelled on client', metadata: {} });
    return { pause() {}, resume() {}, cancel() {} };
  }
  const headers: Record<string, string> = {
    ...options.headers,
    ':method': 'POST',
    ':path': options.path,
    ':authority': connection.authority,
    'content-type': 'application/grpc',
    te: 'trailers',
  };
  if (options.timeoutMs !== undefined) headers['grpc-timeout'] = grpcTimeout(options.timeoutMs);
  try {
    stream = connection.session().request(headers, REQUEST_OPTIONS);
  } catch (error) {
    finish({ code: 14, details: `could not start the call: ${(error as Error).message}`, metadata: {} });
    return { pause() {}, resume() {}, cancel() {} };
  }
  const opened = stream;
  if (options.timeoutMs !== undefined) {
    timer = setTimeout(() => stop(4, 'Deadline exceeded'), options.timeoutMs);
  }
  signal?.addEventListener('abort', onAbort, { once: true });

  const reader = new MessageReader(options.maxMessageBytes, onMessage);
  opened.on('response', (responseHeaders: IncomingHttpHeaders & IncomingHttpStatusHeader) => {
    httpStatus = responseHeaders[':status'] ?? 0;
    // A trailers-only answer (an error before any message) carries the status in the headers.
    remote ??= statusOf(responseHeaders);
  });
  opened.on('data', (chunk: Buffer) => {
    if (local !== undefined) return;
    try {
      reader.push(chunk);
    } catch (error) {
      if (error instanceof FrameError) stop(error.status, error.message);
      else stop(13, `reading the answer failed: ${(error as Error).message}`);
    }
  });
  opened.on('trailers', (trailers: IncomingHttpHeaders) => {
    remote = statusOf(trailers) ?? remote;
  });
  opened.on('error', (error: Error) => {
    streamError = error;
  });
  opened.on('close', () => {
    if (local !== undefined) return finish(local);
    if (remote !== undefined) {
      if (remote.code === 0 && reader.partial)
        return finish({ code: 15, details: 'the stream ended inside a message', metadata: remote.metadata });
      return finish(remote);
    }
    if (httpStatus !== 0 && httpStatus !== 200) {
      return finish({
        code: statusOfHttp(httpStatus),
        details: `the server answered HTTP ${httpStatus}`,
        metadata: {},
      });
    }
    const cause = connection.lastError ?? streamError;
    const text = cause?.message ?? `the stream was reset (HTTP/2 code ${opened.rstCode})`;
    // grpc-js's wording, which the error mapping (and the wrong-port probe) recognise.
    finish({
      code: 14,
      details:
        httpStatus === 0 ? `No connection established. Last error: ${text}` : `Connection dropped: ${text}`,
      metadata: {},
    });
  });
  // The last chunk goes with end(): one write request less, and the END_STREAM flag can ride on
  // the last DATA frame instead of an empty frame of its own.
  const last = body.length - 1;
  if (last > 0) opened.cork();
  for (let i = 0; i < last; i++) opened.write(body[i]);
  // end() uncorks.
  if (last >= 0) opened.end(body[last]);
  else opened.end();
  return {
    pause: () => opened.pause(),
    resume: () => opened.resume(),
    cancel: () => stop(1, 'Cancelled on client'),
  };
}
