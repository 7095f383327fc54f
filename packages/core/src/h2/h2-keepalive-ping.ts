// PING (RFC 9113, 6.7) as keepalive: one ping out at a time, its payload the send time, and a
// timer that ends the connection if the ACK does not come in time.
import { clearLongTimer, type LongTimer, setLongTimeout } from '../internal/long-timer.js';
import { FRAME_PING, frame } from './h2-frame-types.js';
import type { FrameWriter } from './h2-frame-writer.js';

export class KeepalivePing {
  readonly #writer: FrameWriter;
  /** Destroys the connection when a ping goes unanswered. */
  readonly #onTimeout: (error: Error) => void;
  #timer: LongTimer | undefined;
  #payload: Buffer | undefined;
  #onAnswer: (() => void) | undefined;

  constructor(writer: FrameWriter, onTimeout: (error: Error) => void) {
    this.#writer = writer;
    this.#onTimeout = onTimeout;
  }

  /** True while a ping waits for its ACK. */
  get pending(): boolean {
    return this.#payload !== undefined;
  }

  /** Sends a PING; `onAnswer` when the ACK comes, `onTimeout` if it does not within `timeoutMs`. */
  send(timeoutMs: number, onAnswer: (() => void) | undefined): void {
    const payload = Buffer.allocUnsafe(8);
    payload.writeDoubleBE(Date.now());
    this.#payload = payload;
    this.#onAnswer = onAnswer;
    // keepalive.timeoutMs (or grpc.keepalive_timeout_ms) has no upper bound.
    this.#timer = setLongTimeout(() => {
      this.#onTimeout(new Error(`keepalive ping not answered within ${timeoutMs} ms`));
    }, timeoutMs);
    this.#timer?.unref();
    this.#writer.write(frame(FRAME_PING, 0, 0, payload));
  }

  /** A PING ACK arrived: if it answers ours, the ping is over. */
  onAck(payload: Buffer): void {
    if (this.#payload?.equals(payload) !== true) return;
    clearLongTimer(this.#timer);
    const done = this.#onAnswer;
    this.#payload = undefined;
    this.#onAnswer = undefined;
    done?.();
  }

  /** The connection is over: no ping waits any more. */
  cancel(): void {
    clearLongTimer(this.#timer);
    this.#payload = undefined;
  }
}
