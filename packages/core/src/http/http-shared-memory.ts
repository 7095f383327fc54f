import { Extension } from '../extension.js';
import { checkCudaRegion, checkSystemRegion } from '../internal/shm-regions.js';
import type {
  CudaRegionStatus,
  RegisterCudaRegion,
  RegisterSystemRegion,
  SystemRegionStatus,
} from '../shared-memory-rpc.js';
import type { CallOptions } from '../transport.js';
import type { HttpTransport } from './http-transport.js';
import { base64 } from './internal/base64.js';
import { withHttpExtension } from './internal/http-extension.js';

// Triton's system and CUDA shared-memory extensions over HTTP: the same four calls for each kind,
// under /v2/systemsharedmemory and /v2/cudasharedmemory, returning the gRPC client's shapes.

type Json = Record<string, unknown>;
type RegionKind = 'system' | 'cuda';

const KINDS = {
  system: {
    extension: Extension.SystemSharedMemory,
    register: 'registerSystemSharedMemory()',
    status: 'systemSharedMemoryStatus()',
    unregister: 'unregisterSystemSharedMemory()',
  },
  cuda: {
    extension: Extension.CudaSharedMemory,
    register: 'registerCudaSharedMemory()',
    status: 'cudaSharedMemoryStatus()',
    unregister: 'unregisterCudaSharedMemory()',
  },
} as const;

function regionPath(kind: RegionKind, name: string, action: string): string {
  const base = `/v2/${kind}sharedmemory`;
  return name === '' ? `${base}/${action}` : `${base}/region/${encodeURIComponent(name)}/${action}`;
}

async function register(
  http: HttpTransport,
  kind: RegionKind,
  name: string,
  json: Json,
  options: CallOptions,
) {
  const { extension, register: what } = KINDS[kind];
  const path = regionPath(kind, name, 'register');
  await withHttpExtension(http, extension, what, () =>
    http.exchange({ method: 'POST', path, json, what }, options),
  );
}

async function status(http: HttpTransport, kind: RegionKind, name: string, options: CallOptions) {
  const { extension, status: what } = KINDS[kind];
  const path = regionPath(kind, name, 'status');
  const json = await withHttpExtension(http, extension, what, () =>
    http.json<unknown>({ method: 'GET', path, what }, options),
  );
  return (Array.isArray(json) ? json : []) as Json[];
}

export async function registerSystemSharedMemory(
  http: HttpTransport,
  region: RegisterSystemRegion,
  options: CallOptions = {},
): Promise<void> {
  const { name, key, offset, byteSize } = checkSystemRegion(region);
  await register(http, 'system', name, { key, offset, byte_size: byteSize }, options);
}

export async function systemSharedMemoryStatus(
  http: HttpTransport,
  name = '',
  options: CallOptions = {},
): Promise<SystemRegionStatus[]> {
  return (await status(http, 'system', name, options)).map((item) => ({
    name: String(item.name ?? ''),
    key: String(item.key ?? ''),
    offset: Number(item.offset ?? 0),
    byteSize: Number(item.byte_size ?? 0),
  }));
}

export async function registerCudaSharedMemory(
  http: HttpTransport,
  region: RegisterCudaRegion,
  options: CallOptions = {},
): Promise<void> {
  const { name, rawHandle, deviceId, byteSize } = checkCudaRegion(region);
  const json = { raw_handle: { b64: base64(rawHandle) }, device_id: deviceId, byte_size: byteSize };
  await register(http, 'cuda', name, json, options);
}

export async function cudaSharedMemoryStatus(
  http: HttpTransport,
  name = '',
  options: CallOptions = {},
): Promise<CudaRegionStatus[]> {
  return (await status(http, 'cuda', name, options)).map((item) => ({
    name: String(item.name ?? ''),
    deviceId: Number(item.device_id ?? 0),
    byteSize: Number(item.byte_size ?? 0),
  }));
}

/** Unregisters one region of `kind`, or all of them when `name` is empty. */
export async function unregisterSharedMemory(
  http: HttpTransport,
  kind: RegionKind,
  name = '',
  options: CallOptions = {},
): Promise<void> {
  const { extension, unregister: what } = KINDS[kind];
  const path = regionPath(kind, name, 'unregister');
  await withHttpExtension(http, extension, what, () =>
    http.exchange({ method: 'POST', path, what }, options),
  );
}
