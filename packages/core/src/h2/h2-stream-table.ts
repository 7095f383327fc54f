// A session's streams: the open ones by id, the calls waiting (FIFO, bounded) for the server's
// MAX_CONCURRENT_STREAMS to let them start, and the stream ids we hand out (odd, rising, to 2^31-1).
import { MAX_STREAM_ID } from './h2-frame-types.js';
import { CLOSE_BUSY, CLOSE_REFUSED, type SessionStream, STATE_CLOSED, STATE_WAITING } from './h2-stream.js';

export class StreamTable {
  /** Open streams by id (the frame handler looks them up; settings change their windows). */
  readonly open = new Map<number, SessionStream>();
  readonly #waiting: SessionStream[] = [];
  readonly #maxWaiting: number;
  #nextId: number;

  constructor(firstId: number, maxWaiting: number) {
    this.#nextId = firstId;
    this.#maxWaiting = maxWaiting;
  }

  /** Streams open and waiting. */
  get count(): number {
    return this.open.size + this.#waiting.length;
  }

  get waitingCount(): number {
    return this.#waiting.length;
  }

  /** True once no stream id is left: the connection takes no more streams. */
  get idsSpent(): boolean {
    return this.#nextId > MAX_STREAM_ID;
  }

  /** True if the server names a stream we never opened (an id ahead of ours, or a server's even id). */
  neverOpened(id: number): boolean {
    return id >= this.#nextId || id % 2 === 0;
  }

  /** Gives the stream the next id and counts it open. The caller checked `idsSpent` first. */
  add(stream: SessionStream): void {
    stream.id = this.#nextId;
    this.#nextId += 2;
    this.open.set(stream.id, stream);
  }

  delete(stream: SessionStream): void {
    this.open.delete(stream.id);
  }

  /**
   * A new call: true if it may open now (under `maxStreams`, the server's MAX_CONCURRENT_STREAMS,
   * with no call waiting before it); otherwise it waits its turn, or is refused (CLOSE_BUSY) when
   * the queue is full.
   */
  admit(stream: SessionStream, maxStreams: number): boolean {
    const waiting = this.#waiting;
    if (this.open.size < maxStreams && waiting.length === 0) return true;
    if (waiting.length < this.#maxWaiting) waiting.push(stream);
    else {
      stream.state = STATE_CLOSED;
      stream.handler.onClose(
        CLOSE_BUSY,
        0,
        `${waiting.length} calls already wait for the server's limit of ${maxStreams} concurrent streams`,
      );
    }
    return false;
  }

  /** The call waiting longest, if one may open now under `maxStreams`. */
  next(maxStreams: number): SessionStream | undefined {
    const waiting = this.#waiting;
    while (waiting.length > 0 && this.open.size < maxStreams) {
      const stream = waiting.shift() as SessionStream;
      if (stream.state === STATE_WAITING) return stream;
    }
    return undefined;
  }

  /** Takes a call out of the queue (it gave up). */
  removeWaiting(stream: SessionStream): void {
    const index = this.#waiting.indexOf(stream);
    if (index >= 0) this.#waiting.splice(index, 1);
  }

  /** Empties the queue: every call that waited is refused with `why` (it was never sent). */
  refuseWaiting(why: string): void {
    for (const stream of this.#waiting.splice(0)) {
      if (stream.state !== STATE_WAITING) continue;
      stream.state = STATE_CLOSED;
      stream.handler.onClose(CLOSE_REFUSED, 0, why);
    }
  }

  /** Empties the table: every stream, open first, then waiting, hears `kind`, `code`, `message`. */
  closeAll(kind: number, code: number, message: string): void {
    const streams = [...this.open.values(), ...this.#waiting];
    this.open.clear();
    this.#waiting.length = 0;
    for (const stream of streams) {
      if (stream.state === STATE_CLOSED) continue;
      stream.state = STATE_CLOSED;
      stream.handler.onClose(kind, code, message);
    }
  }

  /** The open streams above `lastId` (those a GOAWAY says the server did not process). */
  openAbove(lastId: number): SessionStream[] {
    return [...this.open.values()].filter((stream) => stream.id > lastId);
  }
}
