import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import { Extension, withExtension } from './extension.js';
import { GRPCInferenceService } from './gen/grpc_service_pb.js';
import type { GrpcTransport } from './grpc-transport.js';
import { checkCudaRegion, checkSystemRegion } from './internal/shm-regions.js';
import type { CallOptions } from './transport.js';

const service = GRPCInferenceService.method;

export interface SystemRegionStatus {
  name: string;
  key: string;
  offset: number;
  byteSize: number;
}

export interface CudaRegionStatus {
  name: string;
  deviceId: number;
  byteSize: number;
}

export interface RegisterSystemRegion {
  /** The name inputs and outputs refer to. */
  name: string;
  /** The shm key, with a leading '/' (SystemSharedMemoryRegion.key). */
  key: string;
  byteSize: number;
  /** @default 0 */
  offset?: number;
}

export interface RegisterCudaRegion {
  name: string;
  /** The cudaIpcMemHandle_t bytes (64) your own CUDA code obtained with cudaIpcGetMemHandle. */
  rawHandle: Uint8Array;
  deviceId: number;
  byteSize: number;
}

const SYSTEM = Extension.SystemSharedMemory;
const CUDA = Extension.CudaSharedMemory;

/** One RPC of a shared-memory extension; a server without the extension gets an error naming it. */
function regionCall<I extends DescMessage, O extends DescMessage>(
  grpc: GrpcTransport,
  extension: string,
  operation: string,
  method: DescMethodUnary<I, O>,
  init: MessageInitShape<I>,
  options: CallOptions,
): Promise<MessageShape<O>> {
  return withExtension(extension, operation, grpc.address, () =>
    grpc.unary(method, create(method.input, init), options),
  );
}

// Registration checks a region before anything is sent (internal/shm-regions.ts, shared with HTTP).

export async function registerSystemSharedMemory(
  grpc: GrpcTransport,
  region: RegisterSystemRegion,
  options: CallOptions = {},
) {
  const { offset, byteSize, ...named } = checkSystemRegion(region);
  const init = { ...named, offset: BigInt(offset), byteSize: BigInt(byteSize) };
  const method = service.systemSharedMemoryRegister;
  await regionCall(grpc, SYSTEM, 'registerSystemSharedMemory()', method, init, options);
}

export async function registerCudaSharedMemory(
  grpc: GrpcTransport,
  region: RegisterCudaRegion,
  options: CallOptions = {},
) {
  const { deviceId, byteSize, ...named } = checkCudaRegion(region);
  const init = { ...named, deviceId: BigInt(deviceId), byteSize: BigInt(byteSize) };
  const method = service.cudaSharedMemoryRegister;
  await regionCall(grpc, CUDA, 'registerCudaSharedMemory()', method, init, options);
}

export async function systemSharedMemoryStatus(grpc: GrpcTransport, name = '', options: CallOptions = {}) {
  const method = service.systemSharedMemoryStatus;
  const response = await regionCall(grpc, SYSTEM, 'systemSharedMemoryStatus()', method, { name }, options);
  return Object.values(response.regions).map(
    (status): SystemRegionStatus => ({
      name: status.name,
      key: status.key,
      offset: Number(status.offset),
      byteSize: Number(status.byteSize),
    }),
  );
}

export async function cudaSharedMemoryStatus(grpc: GrpcTransport, name = '', options: CallOptions = {}) {
  const method = service.cudaSharedMemoryStatus;
  const response = await regionCall(grpc, CUDA, 'cudaSharedMemoryStatus()', method, { name }, options);
  return Object.values(response.regions).map(
    (status): CudaRegionStatus => ({
      name: status.name,
      deviceId: Number(status.deviceId),
      byteSize: Number(status.byteSize),
    }),
  );
}

const UNREGISTER = {
  system: {
    extension: SYSTEM,
    what: 'unregisterSystemSharedMemory()',
    rpc: service.systemSharedMemoryUnregister,
  },
  cuda: { extension: CUDA, what: 'unregisterCudaSharedMemory()', rpc: service.cudaSharedMemoryUnregister },
} as const;

/** Unregisters one region of `kind`, or every region of that kind when `name` is empty. */
export async function unregisterSharedMemory(
  grpc: GrpcTransport,
  kind: 'system' | 'cuda',
  name = '',
  options: CallOptions = {},
) {
  const { extension, what, rpc } = UNREGISTER[kind];
  await regionCall<DescMessage, DescMessage>(grpc, extension, what, rpc, { name }, options);
}
