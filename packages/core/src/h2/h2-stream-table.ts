// A session's streams: the open ones by id, the calls waiting (FIFO, bounded) for the server's
// MAX_CONCURRENT_STREAMS to let them start, and the stream ids we hand out (odd, rising, to 2^31-1).
import { MAX_STREAM_ID } from './h2-frame-types.js';
import type { SessionStream } from './h2-stream.js';

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

  /** Queues a call for a stream; false if the queue is full. */
  enqueue(stream: SessionStream): boolean {
    if (this.#waiting.length >= this.#maxWaiting) return false;
    this.#waiting.push(stream);
    return true;
  }

  /** The call waiting longest, if any. */
  dequeue(): SessionStream | undefined {
    return this.#waiting.shift();
  }

  /** Takes a call out of the queue (it gave up). */
  removeWaiting(stream: SessionStream): void {
    const index = this.#waiting.indexOf(stream);
    if (index >= 0) this.#waiting.splice(index, 1);
  }

  /** Empties the queue, returning what waited. */
  takeWaiting(): SessionStream[] {
    return this.#waiting.splice(0);
  }

  /** Empties the table, returning every stream, open first, then waiting. */
  takeAll(): SessionStream[] {
    const streams = [...this.open.values(), ...this.#waiting];
    this.open.clear();
    this.#waiting.length = 0;
    return streams;
  }

  /** The open streams above `lastId` (those a GOAWAY says the server did not process). */
  openAbove(lastId: number): SessionStream[] {
    return [...this.open.values()].filter((stream) => stream.id > lastId);
  }
}
