import { create } from '@bufbuild/protobuf';
import { ErrorCode, InfergateError } from './errors.js';
import { Extension, withExtension } from './extension.js';
import { GRPCInferenceService } from './gen/grpc_service_pb.js';
import type { GrpcTransport } from './grpc-transport.js';
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

function positive(value: number, what: string, allowZero = false) {
  if (!Number.isSafeInteger(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${what} must be a ${allowZero ? 'non-negative' : 'positive'} integer`,
    );
  }
  return BigInt(value);
}

const SYSTEM = Extension.SystemSharedMemory;
const CUDA = Extension.CudaSharedMemory;

export async function registerSystemSharedMemory(
  grpc: GrpcTransport,
  region: RegisterSystemRegion,
  options: CallOptions = {},
) {
  if (!region.key.startsWith('/'))
    throw new InfergateError(ErrorCode.InvalidArgument, "the shm key must start with '/'");
  const request = create(service.systemSharedMemoryRegister.input, {
    name: region.name,
    key: region.key,
    offset: positive(region.offset ?? 0, 'offset', true),
    byteSize: positive(region.byteSize, 'byteSize'),
  });
  await withExtension(SYSTEM, 'registerSystemSharedMemory()', grpc.address, () =>
    grpc.unary(service.systemSharedMemoryRegister, request, options),
  );
}

export async function systemSharedMemoryStatus(grpc: GrpcTransport, name = '', options: CallOptions = {}) {
  const request = create(service.systemSharedMemoryStatus.input, { name });
  const response = await withExtension(SYSTEM, 'systemSharedMemoryStatus()', grpc.address, () =>
    grpc.unary(service.systemSharedMemoryStatus, request, options),
  );
  return Object.values(response.regions).map(
    (status): SystemRegionStatus => ({
      name: status.name,
      key: status.key,
      offset: Number(status.offset),
      byteSize: Number(status.byteSize),
    }),
  );
}

/** Unregisters one region, or every system region when `name` is empty. */
export async function unregisterSystemSharedMemory(
  grpc: GrpcTransport,
  name = '',
  options: CallOptions = {},
) {
  const request = create(service.systemSharedMemoryUnregister.input, { name });
  await withExtension(SYSTEM, 'unregisterSystemSharedMemory()', grpc.address, () =>
    grpc.unary(service.systemSharedMemoryUnregister, request, options),
  );
}

export async function registerCudaSharedMemory(
  grpc: GrpcTransport,
  region: RegisterCudaRegion,
  options: CallOptions = {},
) {
  if (!(region.rawHandle instanceof Uint8Array) || region.rawHandle.byteLength === 0) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'rawHandle must hold the cudaIpcMemHandle_t bytes');
  }
  const request = create(service.cudaSharedMemoryRegister.input, {
    name: region.name,
    rawHandle: region.rawHandle,
    deviceId: positive(region.deviceId, 'deviceId', true),
    byteSize: positive(region.byteSize, 'byteSize'),
  });
  await withExtension(CUDA, 'registerCudaSharedMemory()', grpc.address, () =>
    grpc.unary(service.cudaSharedMemoryRegister, request, options),
  );
}

export async function cudaSharedMemoryStatus(grpc: GrpcTransport, name = '', options: CallOptions = {}) {
  const request = create(service.cudaSharedMemoryStatus.input, { name });
  const response = await withExtension(CUDA, 'cudaSharedMemoryStatus()', grpc.address, () =>
    grpc.unary(service.cudaSharedMemoryStatus, request, options),
  );
  return Object.values(response.regions).map(
    (status): CudaRegionStatus => ({
      name: status.name,
      deviceId: Number(status.deviceId),
      byteSize: Number(status.byteSize),
    }),
  );
}

export async function unregisterCudaSharedMemory(grpc: GrpcTransport, name = '', options: CallOptions = {}) {
  const request = create(service.cudaSharedMemoryUnregister.input, { name });
  await withExtension(CUDA, 'unregisterCudaSharedMemory()', grpc.address, () =>
    grpc.unary(service.cudaSharedMemoryUnregister, request, options),
  );
}
