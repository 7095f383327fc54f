// One stream of the lean gRPC transport (h2-grpc-lean-session.ts): a gRPC call's server side
// (`GrpcServerCall`) and its HTTP/2 state, written through its connection's sender.

import { clearLongTimer, type LongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { finishWithError, type GrpcServerCall } from './h2-grpc-call.js';
import { OK_TRAILERS_BLOCK, RESPONSE_BLOCK, statusBlock } from './h2-grpc-lean-frames.js';
import { prepareReply } from './h2-grpc-lean-prepared-reply.js';
import type { LeanSender } from './h2-grpc-lean-sender.js';
import { status } from './internal/grpc-status.js';

const noop = () => {};

/** One stream: a gRPC call's server side (`GrpcServerCall`) and its HTTP/2 state. */
export class LeanStream implements GrpcServerCall {
  readonly id: number;
  readonly #sender: LeanSender;
  /** Bytes we may still send on this stream (the peer's window for it). */
  sendWindow: number;
  /** Bytes the client sent that we have not yet given back with a WINDOW_UPDATE. */
  unacked = 0;
  /** Bytes the client may still send before a WINDOW_UPDATE. */
  receiveWindow: number;
  /** The client ended its side (END_STREAM). */
  requestEnded = false;
  /** The request's HEADERS carried END_STREAM (its end is delivered once the call is served). */
  endsWithHeaders = false;
  /** Frames waiting for the send window: response chunks, then the final header block. */
  pending: Buffer[] = [];
  pendingTrailers: Buffer | undefined;
  /** Called once the answer's last frame reaches the kernel (`reply`'s `written`). */
  written: (() => void) | undefined;
  /** Our side is over: END_STREAM sent or the stream reset. */
  closed = false;
  #headersSent = false;
  #done = false;
  #timer: LongTimer | undefined;
  #onData: (chunk: Buffer) => void = noop;
  #onEnd: () => void = noop;
  onCancel: () => void = noop;

  constructor(sender: LeanSender, id: number, sendWindow: number, receiveWindow: number) {
    this.#sender = sender;
    this.id = id;
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  get done(): boolean {
    return this.#done;
  }

  deadline(ms: number): void {
    // grpc-timeout reaches 99999999 S (over three years): beyond setTimeout's 2^31 − 1 ms.
    this.#timer = setLongTimeout(() => {
      if (this.#done) return;
      this.finish(status.DEADLINE_EXCEEDED, 'Deadline exceeded');
      this.onCancel();
    }, ms);
  }

  send(framed: Buffer): void {
    if (this.#done || this.closed) return;
    if (!this.#headersSent) {
      this.#headersSent = true;
      this.#sender.headers(this.id, RESPONSE_BLOCK, false);
    }
    this.pending.push(framed);
    this.#sender.pump(this);
  }

  reply(chunks: readonly Buffer[], written?: () => void): void {
    if (this.#done || this.closed) return;
    this.#end();
    this.written = written;
    if (!this.#headersSent) {
      this.#headersSent = true;
      this.#sender.headers(this.id, RESPONSE_BLOCK, false);
    }
    for (const chunk of chunks) this.pending.push(chunk);
    this.pendingTrailers = OK_TRAILERS_BLOCK;
    this.#sender.pump(this);
  }

  replyAfter(chunks: readonly Buffer[], until: Promise<void>, written?: () => void): void {
    if (this.#done || this.closed) return;
    // The answer's frames (HEADERS, DATA, trailers) built now, while the execution runs; at its end
    // they are written as they are if the windows and frame size still allow, else as `reply`.
    const prepared = this.#headersSent ? undefined : prepareReply(this.id, chunks, this.#sender.peerMaxFrame);
    until.then(
      () => {
        if (this.#done || this.closed) return;
        if (prepared !== undefined && this.#sender.writePrepared(this, prepared, written)) {
          this.#end();
          this.#headersSent = true;
          return;
        }
        this.reply(chunks, written);
      },
      (error) => finishWithError(this, error),
    );
  }

  finish(code: number, message: string): void {
    if (this.#done) return;
    this.#end();
    if (this.closed) return;
    if (this.#headersSent) {
      this.pendingTrailers = statusBlock(code, message, false);
      this.#sender.pump(this);
    } else {
      this.#headersSent = true;
      this.pendingTrailers = statusBlock(code, message, true);
      this.#sender.pump(this);
    }
  }

  /** An HTTP answer with no gRPC status (a content type that is not gRPC's). */
  refuse(block: Buffer): void {
    this.#end();
    this.#headersSent = true;
    this.pendingTrailers = block;
    this.#sender.pump(this);
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#onData = listener;
  }

  onEnd(listener: () => void): void {
    this.#onEnd = listener;
  }

  drain(): void {
    this.#onData = noop;
    this.#onEnd = noop;
  }

  /** Request bytes from a DATA frame. */
  data(chunk: Buffer): void {
    this.#onData(chunk);
  }

  /** The client's END_STREAM. */
  ended(): void {
    this.requestEnded = true;
    const listener = this.#onEnd;
    this.#onEnd = noop;
    listener();
  }

  /** The stream is gone before its status went out (RST_STREAM, the connection lost): cancelled. */
  reset(): void {
    this.closed = true;
    this.pending = [];
    this.pendingTrailers = undefined;
    // What was already handed to the socket may still be unwritten: the memory is not given back.
    this.written = undefined;
    this.#onData = noop;
    this.#onEnd = noop;
    if (this.#done) return;
    this.#end();
    this.onCancel();
  }

  #end(): void {
    this.#done = true;
    clearLongTimer(this.#timer);
  }
}
