// Receive memory the http2 engine recycles for answers whose outputs all go into memory the caller
// gave (`RequestedOutput.into`, decision 0026). Such an answer's message is dead once its outputs
// are copied out, so its memory can take the next answer instead of each answer costing a fresh
// buffer: at 1 MiB per answer, fresh buffers made V8 collect its young generation ("external memory
// pressure") about every 15 calls and run a full mark-compact about every 25.
// Why mark-compacts, though the answers die young (V8 11.3 in Node 20; Node 24 measures the same
// rate): V8 counts ArrayBuffer bytes allocated since the last mark-compact against the old
// generation's limit (Heap::OldGenerationSpaceAvailable). After each mark-compact it sets that limit
// to the live old generation times a factor (1.5 to 1.9 in a client process of 8 to 15 MB, from its
// marking speed over its promotion rate), at least live + 8 MB, plus the new space; some 8 to 12 MiB
// of answers start the next marking, which ends 15 to 30 calls on. Its young collection for
// ArrayBuffer memory waits for 32 MiB of it (twice the 16 MiB semi-space): the mark-compact comes
// first. The default call (each answer in memory of its own, which the caller keeps as long as it
// likes) pays that, memory copied or not; bench/gc-external-probe.ts measures it.
import type { MessageAllocator } from './grpc-frames.js';

/** What the pool has done since it was made (tests and metrics). */
export interface MessagePoolStats {
  /** Messages that got memory of their own: nothing idle was large enough. */
  fresh: number;
  /** Messages that got idle memory back. */
  reused: number;
  /** Buffers idle in the pool now, and their bytes. */
  idle: number;
  idleBytes: number;
}

/** The bounds of a pool: idle buffers kept at most, and their bytes at most. */
export interface MessagePoolBounds {
  maxIdle: number;
  maxIdleBytes: number;
}

/**
 * 64 idle buffers of at most 96 MiB together: a client with 64 calls of 1 MiB answers in flight
 * gets every one of them back (each rounds up to 1 MiB + 1/8), and no idle client holds more than
 * that. A larger answer than fits the bound is received as before and left to the collector.
 */
export const DEFAULT_MESSAGE_POOL_BOUNDS: MessagePoolBounds = { maxIdle: 64, maxIdleBytes: 96 * 1024 * 1024 };

/** Below this a message's memory comes from Node's shared 8 KiB slabs already: not worth pooling. */
const SMALLEST_POOLED = 4096;

/** Sizes round up to 1/8 of their power of two, so answers that vary a little share buffers. */
function roundUp(bytes: number): number {
  const step = Math.max(SMALLEST_POOLED, 2 ** Math.floor(Math.log2(bytes)) / 8);
  return Math.ceil(bytes / step) * step;
}

/**
 * A bounded free list of message memory, one per http2 engine. `allocate` gives the smallest idle
 * buffer that fits, or fresh memory; `release` takes a message's memory back once nothing that was
 * handed on views it. `clear` (the engine's close) drops every idle buffer; memory released after it
 * is left to the collector.
 */
export class MessagePool {
  readonly #bounds: MessagePoolBounds;
  readonly #idle: ArrayBuffer[] = [];
  #idleBytes = 0;
  #fresh = 0;
  #reused = 0;
  #closed = false;
  /** Memory this pool handed out: only those come back (a message may have got Node's memory). */
  readonly #ours = new WeakSet<ArrayBufferLike>();

  constructor(bounds: MessagePoolBounds = DEFAULT_MESSAGE_POOL_BOUNDS) {
    this.#bounds = bounds;
  }

  readonly allocate: MessageAllocator = (bytes) => {
    if (bytes < SMALLEST_POOLED) return Buffer.allocUnsafe(bytes);
    const idle = this.#idle;
    let best = -1;
    for (let index = 0; index < idle.length; index++) {
      const size = (idle[index] as ArrayBuffer).byteLength;
      if (size >= bytes && (best < 0 || size < (idle[best] as ArrayBuffer).byteLength)) best = index;
    }
    let memory: ArrayBuffer;
    if (best >= 0) {
      memory = idle[best] as ArrayBuffer;
      idle[best] = idle[idle.length - 1] as ArrayBuffer;
      idle.pop();
      this.#idleBytes -= memory.byteLength;
      this.#reused++;
    } else {
      // Its own memory, not zero-filled: every byte of a message is written before it is read.
      memory = Buffer.allocUnsafeSlow(roundUp(bytes)).buffer as ArrayBuffer;
      this.#ours.add(memory);
      this.#fresh++;
    }
    return Buffer.from(memory, 0, bytes);
  };

  /** Takes back the memory under `message` (a view of what `allocate` gave); keeps it if the bounds allow. */
  release(message: Uint8Array): void {
    const memory = message.buffer;
    if (this.#closed || !this.#ours.has(memory)) return;
    const bytes = memory.byteLength;
    const { maxIdle, maxIdleBytes } = this.#bounds;
    if (this.#idle.length >= maxIdle || this.#idleBytes + bytes > maxIdleBytes) return;
    // A buffer given back twice would be handed to two answers at once.
    if (this.#idle.includes(memory as ArrayBuffer)) return;
    this.#idle.push(memory as ArrayBuffer);
    this.#idleBytes += bytes;
  }

  /** Drops every idle buffer; later releases are ignored. */
  clear(): void {
    this.#closed = true;
    this.#idle.length = 0;
    this.#idleBytes = 0;
  }

  get stats(): MessagePoolStats {
    return { fresh: this.#fresh, reused: this.#reused, idle: this.#idle.length, idleBytes: this.#idleBytes };
  }
}
