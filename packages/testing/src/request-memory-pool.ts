// Memory for large ModelInfer requests, recycled once each answer is written (the lean transport).
// A fresh megabyte per request was the reference server's largest cost at 1 MiB: V8 counts every
// ArrayBuffer's memory against its heap's limits, so each one brought the next full garbage
// collection closer (a mark-compact every 15–30 calls, ~45 % of the server's CPU in `perf`), and
// the kernel cleared its pages again. Triton does the same: a request's input buffers are the
// server's, valid during the execution only.

/** Requests smaller than this take Node's own allocation (from its shared pool when tiny). */
export const MIN_POOLED_BYTES = 64 * 1024;
/** Requests larger than this are not recycled: rare, and their memory would sit idle. */
export const MAX_POOLED_BYTES = 16 * 1024 * 1024;
/**
 * The most idle memory kept for each block size: at least 4 blocks, up to 72 MiB, so 68 blocks of a
 * 1 MiB tensor's request (1 MiB + 64 KiB each). A client at c64 keeps 64 requests in flight, and a
 * block that came back over the bound was dropped and made again later: 64 MiB held 61, and a 5 s
 * window of tritonclient.grpc.aio at c64 made 85 blocks for its 64 requests.
 */
const IDLE_BYTES_PER_SIZE = 72 * 1024 * 1024;

/**
 * Blocks of memory in a few sizes per power of two, handed out for requests' messages and taken back once
 * nothing refers to them. Only memory this pool made is taken back; anything else is left to the
 * garbage collector, so giving back a small request's memory (a slice of Node's shared pool) is
 * harmless.
 */
export class RequestMemoryPool {
  readonly #idle = new Map<number, ArrayBuffer[]>();
  /** The blocks this pool made, so nothing else is ever handed out again. */
  readonly #made = new WeakSet<ArrayBuffer>();
  /** Blocks made since the pool was created, and blocks handed out again (for tests and benchmarks). */
  made = 0;
  reused = 0;

  /** Memory of at least `bytes` bytes: a recycled block when one is idle. */
  readonly allocate = (bytes: number): Buffer => {
    if (bytes < MIN_POOLED_BYTES || bytes > MAX_POOLED_BYTES) return Buffer.allocUnsafe(bytes);
    const size = sizeFor(bytes);
    const idle = this.#idle.get(size)?.pop();
    if (idle !== undefined) {
      this.reused++;
      return Buffer.from(idle, 0, bytes);
    }
    // Its own ArrayBuffer, never a slice of Node's shared pool.
    const block = Buffer.allocUnsafeSlow(size);
    this.#made.add(block.buffer);
    this.made++;
    return block.subarray(0, bytes);
  };

  /**
   * Takes back the block under `memory` (any view of it). The caller promises that nothing reads or
   * writes it any more: no decoded tensor, no answer waiting for the socket.
   */
  release(memory: Uint8Array): void {
    const block = memory.buffer;
    if (!(block instanceof ArrayBuffer) || !this.#made.has(block)) return;
    const size = block.byteLength;
    let idle = this.#idle.get(size);
    if (idle === undefined) {
      idle = [];
      this.#idle.set(size, idle);
    }
    if (idle.length < Math.max(4, IDLE_BYTES_PER_SIZE / size) && !idle.includes(block)) idle.push(block);
  }
}

/**
 * The block size for `bytes`: rounded up to a sixteenth of the power of two below it (at most
 * 6.25 % unused), so a 1 MiB tensor's request, a few hundred bytes over 1 MiB, takes 1 MiB + 64 KiB
 * and not 2 MiB, and 68 of them fit the idle bound (a client at c64 keeps 64 in flight).
 */
function sizeFor(bytes: number): number {
  const step = 2 ** Math.max(0, Math.floor(Math.log2(bytes)) - 4);
  return Math.ceil(bytes / step) * step;
}
