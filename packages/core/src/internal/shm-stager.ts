import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { Extension } from '../extension.js';
import type { GrpcTransport } from '../grpc-transport.js';
import { SystemSharedMemoryRegion } from '../system-shared-memory.js';
import { type EncodedTensor, inSharedMemory, sharedMemoryParameters } from '../tensor.js';
import type { InferRequest } from '../transport.js';
import type * as GrpcWire from './grpc-wire.js';
import { waitForGrpcWire } from './wait-for-grpc-wire.js';

export interface StagerOptions {
  /** Inputs at least this large travel through shared memory. */
  thresholdBytes: number;
  /** Regions kept in the pool (each used by one request at a time). */
  maxRegions: number;
  /** Largest region the pool creates; bigger requests use plain gRPC. */
  maxRegionBytes: number;
}

interface PooledRegion {
  region: SystemSharedMemoryRegion;
  name: string;
}

/** Which path large-input calls took, and why the last one that could not use shared memory did not. */
export interface SharedMemoryPathStats {
  /** Calls whose large inputs travelled through a pooled region. */
  sharedMemoryCalls: number;
  /** Calls with inputs over the threshold that went over plain gRPC instead. */
  plainCalls: number;
  /** The path of the latest call with an input over the threshold. */
  lastPath: 'shared-memory' | 'grpc' | undefined;
  /** Why the latest plain call did not use shared memory. */
  lastFallbackReason: string | undefined;
}

const PROBE_TIMEOUT_MS = 2000;
const ALIGN = 64;

function isLocalHost(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host.startsWith('127.')) return true;
  return Object.values(networkInterfaces()).some((addresses) =>
    addresses?.some((entry) => entry.address === host),
  );
}

/**
 * The automatic shared-memory path (`enableGpuIpc`): when the server runs on this host and
 * advertises system shared memory, large input tensors are copied into a pooled, registered region
 * instead of the message. Anything that does not fit the pool, or a server that cannot use it, goes
 * over plain gRPC without a word.
 */
export class SharedMemoryStager {
  readonly #grpc: GrpcTransport;
  readonly #options: StagerOptions;
  #enabled: Promise<boolean> | undefined;
  #disabled = false;
  readonly #free: PooledRegion[] = [];
  readonly #all = new Set<PooledRegion>();
  #sequence = 0;
  /**
   * Region names must be unique on the server across clients of this process (each numbers its
   * regions from 1) and across processes that reuse a pid: pid, a random token per client, sequence.
   */
  readonly #namePrefix = `infergate_${process.pid}_${randomBytes(4).toString('hex')}_`;
  #reason: string | undefined;
  readonly #stats: SharedMemoryPathStats = {
    sharedMemoryCalls: 0,
    plainCalls: 0,
    lastPath: undefined,
    lastFallbackReason: undefined,
  };

  constructor(grpc: GrpcTransport, options: StagerOptions) {
    this.#grpc = grpc;
    this.#options = options;
  }

  /** Which path calls with large inputs took (a copy). */
  get stats(): SharedMemoryPathStats {
    return { ...this.#stats };
  }

  /** Counts a call with large inputs that went over plain gRPC, and why. */
  recordPlain(reason: string | undefined = this.#reason): void {
    this.#stats.plainCalls++;
    this.#stats.lastPath = 'grpc';
    this.#stats.lastFallbackReason = reason;
  }

  /** Counts a call whose large inputs travelled through a region. */
  recordShared(): void {
    this.#stats.sharedMemoryCalls++;
    this.#stats.lastPath = 'shared-memory';
  }

  /** Regions currently created (for tests and metrics). */
  get regionCount(): number {
    return this.#all.size;
  }

  /** True when the request has an input over the threshold (whether or not the path is usable). */
  wants(request: InferRequest): boolean {
    return request.inputs.some(
      (input) => !inSharedMemory(input) && input.raw.byteLength >= this.#options.thresholdBytes,
    );
  }

  private enabled(): Promise<boolean> {
    this.#enabled ??= (async () => {
      if (!isLocalHost(this.#grpc.endpoint.host)) {
        this.#reason = `the server ${this.#grpc.endpoint.host} is not on this host`;
        return false;
      }
      try {
        const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
        const { create, GRPCInferenceService } = await loadWithin(signal);
        const metadata = await this.#grpc.unary(
          GRPCInferenceService.method.serverMetadata,
          create(GRPCInferenceService.method.serverMetadata.input),
          { signal },
        );
        const listed = metadata.extensions.includes(Extension.SystemSharedMemory);
        if (!listed) this.#reason = 'the server does not list system_shared_memory';
        return listed;
      } catch (error) {
        this.#reason = `the server metadata probe failed: ${(error as Error).message}`;
        return false;
      }
    })();
    return this.#enabled;
  }

  private async acquire(bytes: number): Promise<PooledRegion | undefined> {
    const index = this.#free.findIndex((pooled) => pooled.region.byteSize >= bytes);
    if (index !== -1) return this.#free.splice(index, 1)[0];
    if (this.#all.size >= this.#options.maxRegions) {
      // Replace the smallest free region rather than refuse, so the pool tracks the workload.
      const smallest = this.#free.sort((a, b) => a.region.byteSize - b.region.byteSize).shift();
      if (smallest === undefined) {
        this.#reason = `all ${this.#options.maxRegions} pooled regions are in use (sharedMemory.maxRegions)`;
        return undefined;
      }
      await this.discard(smallest);
    }
    const size = Math.max(this.#options.thresholdBytes, 2 ** Math.ceil(Math.log2(bytes)));
    if (size > this.#options.maxRegionBytes) {
      this.#reason = `${bytes} bytes is over sharedMemory.maxRegionBytes (${this.#options.maxRegionBytes})`;
      return undefined;
    }
    const region = SystemSharedMemoryRegion.create({ byteSize: size });
    const pooled = { region, name: `${this.#namePrefix}${++this.#sequence}` };
    try {
      const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
      const { registerSystemSharedMemory } = await loadWithin(signal);
      await registerSystemSharedMemory(
        this.#grpc,
        { name: pooled.name, key: region.key, byteSize: size },
        { signal },
      );
    } catch (error) {
      // The server cannot map our /dev/shm (another container or host): stop trying.
      region.destroy();
      this.#disabled = true;
      this.#reason = `registering region ${pooled.name} failed: ${(error as Error).message}`;
      return undefined;
    }
    this.#all.add(pooled);
    return pooled;
  }

  private async discard(pooled: PooledRegion): Promise<void> {
    this.#all.delete(pooled);
    try {
      const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
      const { unregisterSharedMemory } = await loadWithin(signal);
      await unregisterSharedMemory(this.#grpc, 'system', pooled.name, { signal });
    } catch {
      // best effort: the server forgets regions whose files are gone
    }
    pooled.region.destroy();
  }

  /**
   * Copies the large inputs into a region and returns the rewritten request, or undefined to go
   * over plain gRPC. `release(true)` returns the region to the pool; `release(false)` (a failed or
   * cancelled call, whose server may still read it) retires it.
   */
  async stage(
    request: InferRequest,
  ): Promise<{ request: InferRequest; release(ok: boolean): void } | undefined> {
    if (!(await this.enabled()) || this.#disabled) return undefined;
    const threshold = this.#options.thresholdBytes;
    let total = 0;
    for (const input of request.inputs) {
      if (!inSharedMemory(input) && input.raw.byteLength >= threshold)
        total += Math.ceil(input.raw.byteLength / ALIGN) * ALIGN;
    }
    const pooled = await this.acquire(total);
    if (pooled === undefined) return undefined;
    let offset = 0;
    const inputs: EncodedTensor[] = request.inputs.map((input) => {
      if (inSharedMemory(input) || input.raw.byteLength < threshold) return input;
      pooled.region.write(input.raw, offset);
      const binding = { region: pooled.name, byteSize: input.raw.byteLength, offset };
      offset += Math.ceil(input.raw.byteLength / ALIGN) * ALIGN;
      return {
        ...input,
        raw: new Uint8Array(0),
        parameters: { ...input.parameters, ...sharedMemoryParameters(binding) },
      };
    });
    return {
      request: { ...request, inputs },
      release: (ok) => {
        if (ok && this.#all.has(pooled)) this.#free.push(pooled);
        else void this.discard(pooled);
      },
    };
  }

  /** Unregisters and removes every region. */
  async close(): Promise<void> {
    this.#disabled = true;
    const all = [...this.#all];
    this.#free.length = 0;
    await Promise.all(all.map((pooled) => this.discard(pooled)));
  }
}

/**
 * The gRPC message code, loaded within `signal` (the probe's or registration's own bound): the
 * load counts toward it, so no step of the shared-memory path waits unbounded.
 */
async function loadWithin(signal: AbortSignal): Promise<typeof GrpcWire> {
  return (await waitForGrpcWire({ signal }, undefined, {})).wire;
}
