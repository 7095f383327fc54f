import { networkInterfaces } from 'node:os';
import { create } from '@bufbuild/protobuf';
import { Extension } from '../extension.js';
import { GRPCInferenceService } from '../gen/grpc_service_pb.js';
import type { GrpcTransport } from '../grpc-transport.js';
import { registerSystemSharedMemory, unregisterSystemSharedMemory } from '../shared-memory-rpc.js';
import { SystemSharedMemoryRegion } from '../system-shared-memory.js';
import { type EncodedTensor, inSharedMemory, sharedMemoryParameters } from '../tensor.js';
import type { InferRequest } from '../transport.js';

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

  constructor(grpc: GrpcTransport, options: StagerOptions) {
    this.#grpc = grpc;
    this.#options = options;
  }

  /** Regions currently created (for tests and metrics). */
  get regionCount(): number {
    return this.#all.size;
  }

  wants(request: InferRequest): boolean {
    if (this.#disabled) return false;
    return request.inputs.some(
      (input) => !inSharedMemory(input) && input.raw.byteLength >= this.#options.thresholdBytes,
    );
  }

  private enabled(): Promise<boolean> {
    this.#enabled ??= (async () => {
      if (!isLocalHost(this.#grpc.endpoint.host)) return false;
      try {
        const metadata = await this.#grpc.unary(
          GRPCInferenceService.method.serverMetadata,
          create(GRPCInferenceService.method.serverMetadata.input),
          { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) },
        );
        return metadata.extensions.includes(Extension.SystemSharedMemory);
      } catch {
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
      if (smallest === undefined) return undefined;
      await this.discard(smallest);
    }
    const size = Math.max(this.#options.thresholdBytes, 2 ** Math.ceil(Math.log2(bytes)));
    if (size > this.#options.maxRegionBytes) return undefined;
    const region = SystemSharedMemoryRegion.create({ byteSize: size });
    const pooled = { region, name: `infergate_${process.pid}_${++this.#sequence}` };
    try {
      await registerSystemSharedMemory(
        this.#grpc,
        { name: pooled.name, key: region.key, byteSize: size },
        { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) },
      );
    } catch {
      // The server cannot map our /dev/shm (another container or host): stop trying.
      region.destroy();
      this.#disabled = true;
      return undefined;
    }
    this.#all.add(pooled);
    return pooled;
  }

  private async discard(pooled: PooledRegion): Promise<void> {
    this.#all.delete(pooled);
    try {
      await unregisterSystemSharedMemory(this.#grpc, pooled.name, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
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
