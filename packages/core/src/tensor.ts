import type { DataType } from './datatype.js';
import type { Parameters } from './parameters.js';

export type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/**
 * What an input tensor's `data` may be:
 * - the datatype's natural typed array (Float32Array for FP32, BigInt64Array for INT64, …;
 *   Float32Array or Uint16Array bit patterns for FP16/BF16);
 * - a Uint8Array / Buffer holding the raw little-endian bytes of any fixed-size datatype;
 * - a plain array of numbers, bigints or booleans (converted with range checks);
 * - for BYTES, an array of strings (UTF-8) and/or Uint8Arrays.
 */
export type TensorInputData =
  | TypedArray
  | readonly number[]
  | readonly bigint[]
  | readonly boolean[]
  | readonly (string | Uint8Array)[];

/** Where a tensor lives in a registered shared-memory region (system or CUDA). */
export interface SharedMemoryBinding {
  /** The name the region was registered under. */
  region: string;
  byteSize: number;
  /** @default 0 */
  offset?: number;
}

export interface DataInputTensor {
  name: string;
  datatype: DataType;
  /** Defaults to `[elementCount]`; `[]` is a 0-d (scalar) tensor. */
  shape?: readonly number[];
  data: TensorInputData;
  sharedMemory?: undefined;
}

/** An input whose bytes the caller already placed in a registered shared-memory region. */
export interface SharedMemoryInputTensor {
  name: string;
  datatype: DataType;
  shape: readonly number[];
  sharedMemory: SharedMemoryBinding;
  data?: undefined;
}

export type InputTensor = DataInputTensor | SharedMemoryInputTensor;

/** A tensor in wire form: what transports, batchers and routers carry. */
export interface EncodedTensor {
  name: string;
  datatype: DataType;
  shape: readonly number[];
  /** Raw little-endian bytes; BYTES elements each carry a 4-byte little-endian length prefix. */
  raw: Uint8Array;
  /** Per-tensor parameters (shared-memory binding, classification, …). */
  parameters?: Parameters;
}

/** The request/response parameters that bind a tensor to a shared-memory region. */
export function sharedMemoryParameters(binding: SharedMemoryBinding): Parameters {
  return {
    shared_memory_region: binding.region,
    shared_memory_byte_size: binding.byteSize,
    ...(binding.offset ? { shared_memory_offset: binding.offset } : {}),
  };
}

/** True when the tensor's bytes travel through shared memory rather than in the message. */
export function inSharedMemory(tensor: { parameters?: Parameters | undefined }): boolean {
  return typeof tensor.parameters?.shared_memory_region === 'string';
}

/** Decoded output data: the natural array for the datatype. */
export type TensorOutputData =
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Float32Array
  | Float64Array
  | Buffer[];
