import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import type { Parameters } from '@infergate/core';
import { status } from './internal/grpc-status.js';
import { integerParameter } from './internal/parameters.js';
import { RpcError } from './rpc-error.js';

/**
 * Regions up to this size keep a copy of their own (see `OpenRegion.view`). A larger region is read
 * into fresh memory per request, as before: a copy of the whole region could be more than the
 * process may allocate (users register regions of many GiB and bind a few MiB of them), and on
 * Node 20 more than a Buffer can hold.
 */
export const REGION_COPY_LIMIT = 1024 * 1024 * 1024;

/** One registered system shared memory region, as SystemSharedMemoryStatus reports it. */
export interface SharedMemoryRegion {
  name: string;
  /** The key the client passed to shm_open, e.g. '/infergate_in'. */
  key: string;
  offset: number;
  byteSize: number;
}

interface OpenRegion extends SharedMemoryRegion {
  fd: number;
  /**
   * This process's copy of the region, made on the first read and refreshed by each read. Triton
   * maps a region once and hands models pointers into it; without mmap, reading into the same
   * memory every time is the nearest match, and spares a fresh buffer per request (first-touch page
   * faults of a fresh 64 MiB buffer cost more than the copy itself).
   */
  view?: Buffer;
}

/** Where a tensor lives in shared memory (the `shared_memory_*` tensor parameters). */
export interface SharedMemoryRef {
  region: string;
  offset: number;
  byteSize: number;
}

/** On Linux, shm_open(key) opens /dev/shm/<key without its leading slash>. */
export function shmPath(key: string): string {
  return `/dev/shm/${key.replace(/^\/+/, '')}`;
}

/** The `shared_memory_*` parameters of a tensor, or undefined when it does not use shared memory. */
export function sharedMemoryRef(parameters: Parameters, tensor: string): SharedMemoryRef | undefined {
  const region = parameters.shared_memory_region;
  if (region === undefined) return undefined;
  const byteSize = integerParameter(parameters, 'shared_memory_byte_size');
  if (typeof region !== 'string' || byteSize === undefined) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `'shared_memory_region' and 'shared_memory_byte_size' must both be given for tensor '${tensor}'`,
    );
  }
  return { region, offset: integerParameter(parameters, 'shared_memory_offset') ?? 0, byteSize };
}

/**
 * Triton's system shared memory manager, with file reads and writes in place of mmap. Messages and
 * codes follow triton-inference-server/server src/shared_memory_manager.cc.
 */
export class SharedMemoryRegistry {
  readonly #regions = new Map<string, OpenRegion>();
  /** The memory behind the regions' copies (see `read`), so that `holds` can tell a view of one. */
  readonly #views = new WeakSet<ArrayBufferLike>();

  register(name: string, key: string, offset: number, byteSize: number): void {
    if (this.#regions.has(name)) {
      throw new RpcError(status.ALREADY_EXISTS, `shared memory region '${name}' already in manager`);
    }
    let fd: number;
    try {
      fd = openSync(shmPath(key), 'r+');
    } catch {
      throw new RpcError(status.INTERNAL, `Unable to open shared memory region: '${key}'`);
    }
    if (offset < 0 || byteSize < 0 || offset + byteSize > fstatSync(fd).size) {
      closeSync(fd);
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `failed to register shared memory region '${name}': invalid args`,
      );
    }
    this.#regions.set(name, { name, key, offset, byteSize, fd });
  }

  /** Every region, or the one named (NOT_FOUND when unknown). */
  status(name = ''): SharedMemoryRegion[] {
    const strip = ({ fd: _fd, view: _view, ...region }: OpenRegion): SharedMemoryRegion => region;
    if (name === '') return [...this.#regions.values()].map(strip);
    const region = this.#regions.get(name);
    if (region === undefined) {
      throw new RpcError(status.NOT_FOUND, `Unable to find system shared memory region: '${name}'`);
    }
    return [strip(region)];
  }

  /** Unregisters one region (unknown names are fine, as in Triton) or, with '', all of them. */
  unregister(name = ''): void {
    const names = name === '' ? [...this.#regions.keys()] : [name];
    for (const each of names) {
      const region = this.#regions.get(each);
      if (region === undefined) continue;
      closeSync(region.fd);
      if (region.view !== undefined) this.#views.delete(region.view.buffer);
      this.#regions.delete(each);
    }
  }

  #locate(ref: SharedMemoryRef): OpenRegion {
    const region = this.#regions.get(ref.region);
    if (region === undefined) {
      throw new RpcError(status.NOT_FOUND, `Unable to find shared memory region: '${ref.region}'`);
    }
    if (ref.offset < 0 || ref.offset >= Math.max(region.byteSize, 1)) {
      throw new RpcError(status.INVALID_ARGUMENT, `Invalid offset for shared memory region: '${ref.region}'`);
    }
    if (ref.byteSize < 0 || ref.offset + ref.byteSize > region.byteSize) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `Invalid offset + byte size for shared memory region: '${ref.region}'`,
      );
    }
    return region;
  }

  /**
   * The bytes of an input tensor placed in a region: a view of the region's copy, as in Triton a
   * pointer into the mapping. It holds what the region held at this call and changes when a later
   * request reads the same bytes, so whatever outlives the request (a response) must copy it.
   */
  read(ref: SharedMemoryRef): Uint8Array {
    const region = this.#locate(ref);
    let view: Buffer;
    if (region.byteSize > REGION_COPY_LIMIT) {
      // Too large to copy whole: this read gets memory of its own, as it always did.
      view = Buffer.allocUnsafe(ref.byteSize);
    } else {
      if (region.view === undefined) {
        region.view = Buffer.allocUnsafeSlow(region.byteSize);
        this.#views.add(region.view.buffer);
      }
      view = region.view.subarray(ref.offset, ref.offset + ref.byteSize);
    }
    let done = 0;
    while (done < ref.byteSize) {
      const count = readSync(region.fd, view, done, ref.byteSize - done, region.offset + ref.offset + done);
      if (count === 0) {
        // The file shrank under us (the client truncated it): what is missing reads as zeros.
        view.fill(0, done);
        break;
      }
      done += count;
    }
    return view;
  }

  /** True when `bytes` lie in a region's copy (see read), so keeping them needs a copy. */
  holds(bytes: Uint8Array): boolean {
    return this.#views.has(bytes.buffer);
  }

  /** Writes an output tensor into a region; the region must be large enough (INTERNAL otherwise). */
  write(ref: SharedMemoryRef, tensor: string, bytes: Uint8Array): void {
    const region = this.#locate(ref);
    if (bytes.byteLength > ref.byteSize) {
      throw new RpcError(
        status.INTERNAL,
        `shared memory size specified with the request for output '${tensor}' (${ref.byteSize} bytes) ` +
          `should be at least ${bytes.byteLength} bytes to hold the results`,
      );
    }
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(region.fd, bytes, done, bytes.byteLength - done, region.offset + ref.offset + done);
    }
  }
}
