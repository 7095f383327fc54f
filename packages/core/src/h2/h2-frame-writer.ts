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

function scheduleMicrotaskUncork(writer: FrameWriter): void {
  queueMicrotask(() => writer.uncork());
}

export class FrameWriter {
  readonly #socket: Socket;
  readonly #policy: WritePolicy;
  #corked = false;

  constructor(socket: Socket, policy: WritePolicy) {
    this.#socket = socket;
    this.#policy = policy;
  }

  /** Queues `buffer` for the socket, corking it first unless the policy is `now`. */
  write(buffer: Uint8Array): void {
    if (this.#policy !== 'now' && !this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      if (this.#policy === 'microtask') scheduleMicrotaskUncork(this);
      else setImmediate(() => this.uncork());
    }
    this.#socket.write(buffer);
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
