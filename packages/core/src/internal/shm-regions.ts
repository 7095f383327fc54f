import { ErrorCode, InfergateError } from '../errors.js';
import type { RegisterCudaRegion, RegisterSystemRegion } from '../shared-memory-rpc.js';

// What a region registration must hold, checked the same way before a gRPC or an HTTP request is
// built (the server would refuse it anyway, with a less helpful message or none).

function wholeNumber(value: number, what: string, allowZero: boolean): number {
  if (!Number.isSafeInteger(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${what} must be a ${allowZero ? 'non-negative' : 'positive'} integer`,
    );
  }
  return value;
}

export interface CheckedSystemRegion {
  name: string;
  key: string;
  offset: number;
  byteSize: number;
}

export function checkSystemRegion(region: RegisterSystemRegion): CheckedSystemRegion {
  if (typeof region.key !== 'string' || !region.key.startsWith('/'))
    throw new InfergateError(ErrorCode.InvalidArgument, "the shm key must start with '/'");
  return {
    name: region.name,
    key: region.key,
    offset: wholeNumber(region.offset ?? 0, 'offset', true),
    byteSize: wholeNumber(region.byteSize, 'byteSize', false),
  };
}

export interface CheckedCudaRegion {
  name: string;
  rawHandle: Uint8Array;
  deviceId: number;
  byteSize: number;
}

export function checkCudaRegion(region: RegisterCudaRegion): CheckedCudaRegion {
  if (!(region.rawHandle instanceof Uint8Array) || region.rawHandle.byteLength === 0) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'rawHandle must hold the cudaIpcMemHandle_t bytes');
  }
  return {
    name: region.name,
    rawHandle: region.rawHandle,
    deviceId: wholeNumber(region.deviceId, 'deviceId', true),
    byteSize: wholeNumber(region.byteSize, 'byteSize', false),
  };
}
