import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { ErrorCode, InfergateError } from './errors.js';

/** Where POSIX shared memory lives on Linux: `shm_open("/name")` opens `/dev/shm/name`. */
export const SHM_DIRECTORY = '/dev/shm';

const live = new Set<SystemSharedMemoryRegion>();
let exitHookInstalled = false;

function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Regions are files: remove them even if the process exits without closing its clients.
  process.once('exit', () => {
    for (const region of live) region.destroy();
  });
}

export interface CreateRegionOptions {
  byteSize: number;
  /** The shm key without or with its leading '/'; default: a fresh random one. */
  key?: string;
}

/**
 * A system shared-memory region created from Node without a native addon: a file under /dev/shm
 * (open + ftruncate), which is the same object `shm_open` maps in the server process.
 */
export class SystemSharedMemoryRegion {
  /** The key as Triton expects it in SystemSharedMemoryRegister: with a leading '/'. */
  readonly key: string;
  readonly byteSize: number;
  readonly path: string;
  #fd: number | undefined;

  private constructor(key: string, byteSize: number, fd: number) {
    this.key = key;
    this.byteSize = byteSize;
    this.path = `${SHM_DIRECTORY}/${key.slice(1)}`;
    this.#fd = fd;
  }

  static create(options: CreateRegionOptions): SystemSharedMemoryRegion {
    const { byteSize } = options;
    if (!Number.isSafeInteger(byteSize) || byteSize <= 0) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `shared memory byteSize must be a positive integer, got ${byteSize}`,
      );
    }
    const bare = (options.key ?? `infergate_${process.pid}_${randomBytes(6).toString('hex')}`).replace(
      /^\//,
      '',
    );
    if (!/^[A-Za-z0-9._-]+$/.test(bare)) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `shared memory key '${bare}' may hold only letters, digits, '.', '_' and '-'`,
      );
    }
    let fd: number;
    try {
      fd = openSync(`${SHM_DIRECTORY}/${bare}`, 'w+', 0o600);
      ftruncateSync(fd, byteSize);
    } catch (error) {
      throw new InfergateError(
        ErrorCode.FailedPrecondition,
        `cannot create shared memory under ${SHM_DIRECTORY}: ${String(error)}`,
        {
          cause: error,
        },
      );
    }
    const region = new SystemSharedMemoryRegion(`/${bare}`, byteSize, fd);
    live.add(region);
    installExitHook();
    return region;
  }

  get closed(): boolean {
    return this.#fd === undefined;
  }

  private fd(): number {
    if (this.#fd === undefined)
      throw new InfergateError(ErrorCode.FailedPrecondition, `shared memory ${this.key} is closed`);
    return this.#fd;
  }

  private checkRange(offset: number, length: number) {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + length > this.byteSize) {
      throw new InfergateError(
        ErrorCode.OutOfRange,
        `shared memory ${this.key}: ${length} bytes at offset ${offset} do not fit in ${this.byteSize}`,
      );
    }
  }

  /** Copies bytes into the region at `offset`. */
  write(data: Uint8Array, offset = 0): void {
    this.checkRange(offset, data.byteLength);
    const fd = this.fd();
    let written = 0;
    while (written < data.byteLength) {
      written += writeSync(fd, data, written, data.byteLength - written, offset + written);
    }
  }

  /** Reads `length` bytes from `offset` into a new Buffer (or into `target`). */
  read(offset: number, length: number, target: Buffer = Buffer.allocUnsafe(length)): Buffer {
    this.checkRange(offset, length);
    const fd = this.fd();
    let done = 0;
    while (done < length) {
      const count = readSync(fd, target, done, length - done, offset + done);
      if (count === 0) break;
      done += count;
    }
    return target.subarray(0, done);
  }

  /** Closes and removes the region. Unregister it from servers first. Idempotent. */
  destroy(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    live.delete(this);
    try {
      closeSync(fd);
    } finally {
      try {
        unlinkSync(this.path);
      } catch {
        // already removed
      }
    }
  }
}
