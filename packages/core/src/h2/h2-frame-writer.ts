// The session's one way to the socket, and when bytes leave: the write policy that corks the
// socket so that the frames of many calls go out in one write.
import type { Socket } from 'node:net';

/**
 * When a request's bytes go to the socket. `microtask` (the engine's): held (corked) until the
 * microtask queue drains, so the requests the answers of one read start leave in one write, before
 * the event loop moves on; `now`: a write per request; `immediate`: at the next setImmediate, as
 * node:http2 does. The unary benchmark compares them (docs/benchmarks.md).
 */
export type WritePolicy = 'now' | 'microtask' | 'immediate';

/**
 * The most answers (PING and SETTINGS ACKs) that may wait to reach the kernel. A server that keeps
 * asking while it does not read would otherwise grow our write buffer without end (nghttp2 holds
 * its queue of such answers to the same number).
 */
export const MAX_UNFLUSHED_ANSWERS = 1000;

function scheduleMicrotaskUncork(writer: FrameWriter): void {
  queueMicrotask(() => writer.uncork());
}

export class FrameWriter {
  readonly #socket: Socket;
  readonly #policy: WritePolicy;
  #corked = false;
  #unflushedAnswers = 0;
  readonly #answerFlushed = () => {
    this.#unflushedAnswers--;
  };

  constructor(socket: Socket, policy: WritePolicy) {
    this.#socket = socket;
    this.#policy = policy;
  }

  /** Queues `buffer` for the socket, corking it first unless the policy is `now`. */
  write(buffer: Uint8Array): void {
    if (this.#policy !== 'now' && !this.#corked) this.#cork();
    this.#socket.write(buffer);
  }

  /**
   * Writes `buffer` at once when nothing is held for the socket this turn (under `microtask` and
   * `immediate` as under `now`): a request on a connection with no other stream gains nothing from
   * waiting for company, and waiting behind the rest of the turn (a failover wave moving calls off a
   * lost endpoint) delays it. Later writes of the same turn are held as usual.
   */
  writeAlone(buffer: Uint8Array): void {
    // Not corking: if this turn's writes are held already, this one joins them.
    this.#socket.write(buffer);
  }

  /**
   * Queues an answer the server asked for (a PING or SETTINGS ACK); false, writing nothing, if
   * MAX_UNFLUSHED_ANSWERS earlier ones have not reached the kernel yet.
   */
  writeAnswer(buffer: Uint8Array): boolean {
    if (this.#unflushedAnswers >= MAX_UNFLUSHED_ANSWERS) return false;
    this.#unflushedAnswers++;
    if (this.#policy !== 'now' && !this.#corked) this.#cork();
    // The callback runs once the bytes reach the kernel (or the socket is gone).
    this.#socket.write(buffer, this.#answerFlushed);
    return true;
  }

  #cork(): void {
    this.#corked = true;
    this.#socket.cork();
    if (this.#policy === 'microtask') scheduleMicrotaskUncork(this);
    else setImmediate(() => this.uncork());
  }

  /** Flushes writes held by the `microtask`/`immediate` policies. */
  uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.#socket.uncork();
  }

  /**
   * Starts writing several frames that belong together (a request's HEADERS and DATA): under `now`
   * they are held until `endBatch`, the other policies hold them anyway. True if `endBatch` must follow.
   */
  beginBatch(): boolean {
    if (this.#policy !== 'now') return false;
    this.#socket.cork();
    return true;
  }

  endBatch(): void {
    this.#socket.uncork();
  }
}
