import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { MAX_MESSAGE_BYTES } from '@infergate/core';
import { clearLongTimer, type LongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { FramingError, GrpcMessageReader, type RawMessage } from './internal/grpc-message-reader.js';
import { status } from './internal/grpc-status.js';
import {
  decompress,
  encodeGrpcMessage,
  headersToMetadata,
  messagePrefix,
  parseTimeout,
} from './internal/grpc-wire.js';
import { ModelInferRequestSchema, ModelStreamInferResponseSchema } from './internal/proto.js';
import { MIN_POOLED_BYTES, type RequestMemoryPool } from './request-memory-pool.js';
import { type RpcError, toRpcError } from './rpc-error.js';
import { STREAM_INFER_PATH, startUnary, type UnaryRoute } from './rpc-routes.js';
import type { ServerState } from './server-state.js';
import { handleModelStreamInfer } from './stream-handler.js';

/**
 * One gRPC call's server side as the serving code below sees it, whatever carries it: node:http2's
 * stream (`H2Call`) or the lean transport's (h2-grpc-lean-stream.ts).
 */
export interface GrpcServerCall {
  /** The status went out (or the call was cancelled): nothing more is sent. */
  readonly done: boolean;
  /** Called once if the client cancels or the deadline passes before the status is sent. */
  onCancel: () => void;
  /** Arms the deadline: at `ms`, DEADLINE_EXCEEDED goes out and the call counts as cancelled. */
  deadline(ms: number): void;
  /** A response message, already framed (prefix included). */
  send(framed: Buffer): void;
  /**
   * The one response of a unary call (its chunks, in order), then status OK. `written`, if given,
   * is called once the whole answer has reached the kernel, so nothing refers to the chunks' memory
   * any more; it is never called if the answer does not go out whole (the call was reset first, the
   * connection failed), nor by a transport that cannot tell (node:http2's).
   */
  reply(chunks: readonly Buffer[], written?: () => void): void;
  /**
   * As `reply`, once `until` settles (its execution's end; decision 0023): the answer's bytes are
   * ready before, written then. If `until` rejects, the call ends with that error instead; a call
   * cancelled meanwhile sends nothing more.
   */
  replyAfter(chunks: readonly Buffer[], until: Promise<void>, written?: () => void): void;
  /** Ends the call with `code` (0: OK). */
  finish(code: number, message: string): void;
  /** The request's bytes as they arrive (`listener` is set once, before any arrive). */
  onData(listener: (chunk: Buffer) => void): void;
  /** The request's end (END_STREAM); set once. */
  onEnd(listener: () => void): void;
  /** Reads and drops what is left of the request. */
  drain(): void;
}

/** What every stream of one listener serves from. */
export interface H2ServeContext {
  readonly state: ServerState;
  readonly routes: ReadonlyMap<string, UnaryRoute>;
  /**
   * Memory for large ModelInfer requests, taken back once their answer is written (only a
   * transport whose `reply` reports that: the lean one).
   */
  readonly requestMemory?: RequestMemoryPool;
}

const noop = () => {};

// The response's headers and options, the same for every call (node:http2 copies them; nothing
// mutates them). No `date` header (gRPC does not use it: one header less to format and encode per
// call) and no `grpc-encoding` (identity; responses are never compressed).
const RESPONSE_HEADERS: OutgoingHttpHeaders = {
  ':status': 200,
  'content-type': 'application/grpc+proto',
  'grpc-accept-encoding': 'identity,deflate,gzip',
};
const RESPONSE_OPTIONS = { waitForTrailers: true, sendDate: false };
const OK_TRAILERS: OutgoingHttpHeaders = { 'grpc-status': '0' };
const TRAILERS_ONLY_OPTIONS = { endStream: true, sendDate: false };

/**
 * A unary call's 'wantTrailers' listener (the stream is `this`): status OK, no closure per call.
 *
 * node:http2 writes the answer's HEADERS and DATA in one write and its trailers in a later one: it
 * submits them from a `setImmediate` of its own and writes them on the event loop's next turn, so
 * the client wakes for the message, then again for its status. Closing the stream (NO_ERROR) in the
 * immediate queued right after that one makes node:http2 write what it holds at once (it flushes
 * before a stream's RST_STREAM, and sends none for a stream both sides have ended, as here: a
 * unary reply goes only after the request's end). The same frames, on the wire sooner.
 */
function sendOkTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
  setImmediate(flushTrailers, this);
}

function flushTrailers(stream: ServerHttp2Stream): void {
  if (!stream.closed && !stream.destroyed) stream.close();
}

/**
 * The server side of one gRPC call on a `node:http2` stream: response headers on the first
 * message, trailers (or a trailers-only answer) with the status, the `grpc-timeout` deadline, and
 * the client's cancellation (the stream closed before the status went out).
 */
class H2Call implements GrpcServerCall {
  readonly #stream: ServerHttp2Stream;
  #headersSent = false;
  #done = false;
  #trailers: OutgoingHttpHeaders | undefined;
  #timer: LongTimer | undefined;
  /** Called once if the client cancels or the deadline passes before the status is sent. */
  onCancel: () => void = noop;

  constructor(stream: ServerHttp2Stream) {
    this.#stream = stream;
    stream.once('close', () => {
      if (this.#done) return;
      this.#done = true;
      clearLongTimer(this.#timer);
      this.onCancel();
    });
  }

  get done(): boolean {
    return this.#done;
  }

  /** Arms the deadline: at `ms`, DEADLINE_EXCEEDED goes out and the call counts as cancelled. */
  deadline(ms: number): void {
    // grpc-timeout reaches 99999999 S (over three years): beyond setTimeout's 2^31 − 1 ms.
    this.#timer = setLongTimeout(() => {
      if (this.#done) return;
      this.finish(status.DEADLINE_EXCEEDED, 'Deadline exceeded');
      this.onCancel();
    }, ms);
  }

  /** Response headers; `okOnly`: the status is OK whatever happens next (a unary reply). */
  #respond(okOnly: boolean): void {
    this.#headersSent = true;
    const stream = this.#stream;
    stream.respond(RESPONSE_HEADERS, RESPONSE_OPTIONS);
    if (okOnly) stream.on('wantTrailers', sendOkTrailers);
    else stream.once('wantTrailers', () => stream.sendTrailers(this.#trailers ?? OK_TRAILERS));
  }

  /** A response message, already framed (prefix included). */
  send(framed: Buffer): void {
    if (this.#done || this.#stream.destroyed) return;
    if (!this.#headersSent) this.#respond(false);
    this.#stream.write(framed);
  }

  /** The one response of a unary call (its chunks, in order), then status OK; `written` is not called. */
  reply(chunks: readonly Buffer[]): void {
    if (this.#done || this.#stream.destroyed) return;
    this.#done = true;
    clearLongTimer(this.#timer);
    if (!this.#headersSent) this.#respond(true);
    const stream = this.#stream;
    const last = chunks.length - 1;
    // Held until `end`, so the chunks go down together (node:http2 keeps them, it does not copy).
    if (last > 0) stream.cork();
    for (let i = 0; i < last; i++) stream.write(chunks[i]);
    stream.end(chunks[last]);
  }

  replyAfter(chunks: readonly Buffer[], until: Promise<void>): void {
    until.then(
      () => this.reply(chunks),
      (error) => finishWithError(this, error),
    );
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#stream.on('data', listener);
  }

  onEnd(listener: () => void): void {
    this.#stream.once('end', listener);
  }

  drain(): void {
    this.#stream.resume();
  }

  /** Ends the call with `code` (0: OK). */
  finish(code: number, message: string): void {
    if (this.#done) return;
    this.#done = true;
    clearLongTimer(this.#timer);
    const stream = this.#stream;
    if (stream.destroyed || stream.closed) return;
    const trailers: OutgoingHttpHeaders = { 'grpc-status': String(code) };
    if (message !== '') trailers['grpc-message'] = encodeGrpcMessage(message);
    if (this.#headersSent) {
      this.#trailers = trailers;
      stream.end();
    } else {
      trailers[':status'] = 200;
      trailers['content-type'] = 'application/grpc+proto';
      stream.respond(trailers, TRAILERS_ONLY_OPTIONS);
    }
  }
}

/** Serves one HTTP/2 stream: a unary RPC of the service, ModelStreamInfer, or a refusal. */
export function serveH2Stream(
  context: H2ServeContext,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
): void {
  stream.on('error', noop);
  const contentType = headers['content-type'];
  if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
    // As grpc-js: HTTP 415 with no gRPC status (clients report it as a transport error).
    stream.respond({ ':status': 415 }, { endStream: true });
    return;
  }
  serveGrpcCall(context, new H2Call(stream), headers);
}

/**
 * Serves one gRPC call (its content type already checked): a unary RPC of the service,
 * ModelStreamInfer, or a refusal.
 */
export function serveGrpcCall(
  context: H2ServeContext,
  call: GrpcServerCall,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): void {
  const path = headers[':path'] ?? '';
  const timeout = headers['grpc-timeout'];
  if (typeof timeout === 'string') {
    try {
      call.deadline(parseTimeout(timeout));
    } catch (error) {
      call.finish((error as FramingError).code, (error as FramingError).message);
      call.drain();
      return;
    }
  }
  const encoding = typeof headers['grpc-encoding'] === 'string' ? headers['grpc-encoding'] : 'identity';
  if (path === STREAM_INFER_PATH) {
    serveStreamInfer(context.state, headers, call, encoding);
    return;
  }
  const route = typeof path === 'string' ? context.routes.get(path) : undefined;
  if (route === undefined) {
    call.finish(status.UNIMPLEMENTED, `The server does not implement the method ${String(path)}`);
    call.drain();
    return;
  }
  // Only ModelInfer's memory is recycled: other requests' decoded bytes may be kept (a model's files).
  const memory = route.key === 'modelInfer' ? context.requestMemory : undefined;
  serveUnary(context.state, route, headers, call, encoding, memory);
}

type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Ends `call` with `error`'s status (a held answer whose execution never ran). */
export function finishWithError(call: GrpcServerCall, error: unknown): void {
  const failure = toRpcError(error);
  call.finish(failure.code, failure.message);
}

function failWith(call: GrpcServerCall, error: unknown): void {
  if (error instanceof FramingError) call.finish(error.code, error.message);
  else call.finish(status.INTERNAL, 'Error deserializing request');
}

function serveUnary(
  state: ServerState,
  route: UnaryRoute,
  headers: RequestHeaders,
  call: GrpcServerCall,
  encoding: string,
  memory: RequestMemoryPool | undefined,
): void {
  let message: RawMessage | undefined;
  let count = 0;
  const reader = new GrpcMessageReader(
    MAX_MESSAGE_BYTES,
    (received) => {
      message = received;
      count += 1;
    },
    memory?.allocate,
  );
  call.onData((chunk: Buffer) => {
    if (call.done) return;
    try {
      reader.push(chunk);
    } catch (error) {
      failWith(call, error);
      return;
    }
    if (count > 1) {
      call.finish(status.UNIMPLEMENTED, `Received a second request message for unary method ${route.path}`);
    }
  });
  call.onEnd(() => {
    if (call.done) return;
    if (message === undefined || reader.partial) {
      call.finish(status.UNIMPLEMENTED, `Received no request message for unary method ${route.path}`);
      return;
    }
    void runUnary(state, route, headers, call, message, encoding, memory);
  });
}

async function runUnary(
  state: ServerState,
  route: UnaryRoute,
  headers: RequestHeaders,
  call: GrpcServerCall,
  message: RawMessage,
  encoding: string,
  memory: RequestMemoryPool | undefined,
): Promise<void> {
  let request: unknown;
  try {
    const bytes = message.compressed
      ? await decompress(message.bytes, encoding, MAX_MESSAGE_BYTES)
      : message.bytes;
    request = route.decode(bytes);
  } catch (error) {
    failWith(call, error);
    return;
  }
  if (call.done) return;
  // This transport holds answers until their execution ends (decision 0023).
  const run = startUnary(state, route, request, headersToMetadata(headers), true);
  call.onCancel = run.cancel;
  let response: unknown;
  try {
    response = await run.result;
  } catch (error) {
    call.finish((error as RpcError).code, (error as RpcError).message);
    return;
  }
  let framed: Buffer[];
  try {
    framed = route.encodeFramed(response);
  } catch {
    call.finish(status.INTERNAL, 'Error serializing response');
    return;
  }
  // Once the answer is in the kernel, the execution is over (the answer waits for it) and nothing
  // refers to the request's memory: the decoded inputs and an output that passed one through
  // (identity's) are done with. An answer that does not go out leaves it to the garbage collector.
  const written =
    memory === undefined || message.bytes.byteLength < MIN_POOLED_BYTES
      ? undefined
      : () => memory.release(message.bytes);
  const until = run.heldUntil();
  if (until === undefined) call.reply(framed, written);
  else call.replyAfter(framed, until, written);
}

function serveStreamInfer(
  state: ServerState,
  headers: RequestHeaders,
  call: GrpcServerCall,
  encoding: string,
): void {
  const events = handleModelStreamInfer(state, {
    metadata: headersToMetadata(headers),
    write: (response) => {
      const bytes = toBinary(ModelStreamInferResponseSchema, response);
      call.send(Buffer.concat([messagePrefix(bytes.byteLength), bytes]));
    },
    end: () => call.finish(status.OK, ''),
    fail: (code, message) => call.finish(code, message),
  });
  call.onCancel = () => events.cancel();
  const refuse = (error: unknown) => {
    failWith(call, error);
    events.cancel();
  };
  const deliver = (bytes: Buffer) => {
    if (call.done) return;
    let request: ReturnType<typeof fromBinary<typeof ModelInferRequestSchema>>;
    try {
      request = fromBinary(ModelInferRequestSchema, bytes);
    } catch (error) {
      refuse(error);
      return;
    }
    events.message(request);
  };
  // Compressed messages decompress asynchronously; `order` keeps the requests (and the half-close)
  // in the order they arrived.
  let order: Promise<void> | undefined;
  const reader = new GrpcMessageReader(MAX_MESSAGE_BYTES, (received) => {
    if (!received.compressed && order === undefined) {
      deliver(received.bytes);
      return;
    }
    order = (order ?? Promise.resolve()).then(async () => {
      if (call.done) return;
      try {
        deliver(
          received.compressed
            ? await decompress(received.bytes, encoding, MAX_MESSAGE_BYTES)
            : received.bytes,
        );
      } catch (error) {
        refuse(error);
      }
    });
  });
  call.onData((chunk: Buffer) => {
    if (call.done) return;
    try {
      reader.push(chunk);
    } catch (error) {
      refuse(error);
    }
  });
  call.onEnd(() => {
    const halfClose = () => {
      if (!call.done) events.halfClose();
    };
    if (order === undefined) halfClose();
    else void order.then(halfClose);
  });
}
