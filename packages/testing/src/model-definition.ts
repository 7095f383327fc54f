import type { MessageInitShape } from '@bufbuild/protobuf';
import type { DataType, EncodedTensor, InputTensor, Parameters, TensorOutputData } from '@infergate/core';
import type { ModelConfigSchema } from './internal/proto.js';

/** One input or output as the model's configuration declares it. */
export interface TensorSpec {
  name: string;
  /** The datatype the model configuration reports (and, unless `anyDatatype`, requires). */
  datatype: DataType;
  /** Shape without the batch dimension when the model batches; -1 is a variable dimension. */
  dims: readonly number[];
  /** The request may leave this input out (Triton's `optional: true`). @default false */
  optional?: boolean;
  /**
   * Accept any datatype for this input instead of `datatype`. Not something Triton does: it lets a
   * test model such as `identity` echo whatever it is sent. @default false
   */
  anyDatatype?: boolean;
  /**
   * Accept any shape (any rank, any batch size) for this input instead of checking it against
   * `dims`. Byte lengths are still checked against the request's own shape. @default false
   */
  anyShape?: boolean;
}

/** One decoded input, as `execute` sees it. */
export interface ExecuteInput {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  /** The wire bytes, a view into the received message (no copy). */
  readonly raw: Uint8Array;
  readonly parameters: Parameters;
  /** The natural array (Float32Array for FP32, Buffer[] for BYTES, …), decoded on first access. */
  readonly data: TensorOutputData;
}

export interface ExecuteRequest {
  /** Model name and the version that was resolved (the latest when the request named none). */
  readonly model: string;
  readonly version: string;
  /** The request id ('' when none was sent); the server echoes it in the response. */
  readonly id: string;
  readonly parameters: Parameters;
  /** The inputs in request order. */
  readonly inputs: readonly ExecuteInput[];
  /** The input called `name`; throws INVALID_ARGUMENT if the request did not carry it. */
  input(name: string): ExecuteInput;
  /** Outputs the response will carry: those requested, or every declared output. */
  readonly requestedOutputs: readonly string[];
  /** The batch dimension (`shape[0]` of the first input) for batching models, else 1. */
  readonly batchSize: number;
  /** Request metadata (gRPC headers) as plain strings. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface ExecuteContext {
  /** Aborts when the client cancels, the deadline passes or the server is killed. */
  readonly signal: AbortSignal;
}

/**
 * An output: either values to encode (`data`, as for a client input) or ready wire bytes (`raw`),
 * which pass through without a copy.
 */
export type ExecuteOutput = InputTensor | (EncodedTensor & { data?: never });

/** Extra `inference.ModelConfig` fields merged over the ones derived from the definition. */
export type ModelConfigInit = Omit<MessageInitShape<typeof ModelConfigSchema>, '$typeName'>;

/** A model the test server serves: its configuration plus a function that computes the outputs. */
export interface ModelDefinition {
  name: string;
  /** @default ['1']; the highest number is the default version. */
  versions?: readonly string[];
  /** @default 'infergate_test' */
  platform?: string;
  /**
   * Largest batch; 0 means the model does not batch. When it is above 0, every input's shape must
   * start with the batch dimension (as in Triton), and `dims` leave it out. @default 0
   */
  maxBatchSize?: number;
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
  execute(
    request: ExecuteRequest,
    context: ExecuteContext,
  ): Promise<readonly ExecuteOutput[]> | readonly ExecuteOutput[];
  /** Extra config fields (instance groups, parameters, a different scheduler, …). */
  config?: ModelConfigInit;
}

/** A definition with its defaults filled in. */
export interface ResolvedModel extends ModelDefinition {
  readonly versions: readonly string[];
  readonly platform: string;
  readonly maxBatchSize: number;
}

export function resolveModel(definition: ModelDefinition): ResolvedModel {
  const { name, versions = ['1'], platform = 'infergate_test', maxBatchSize = 0 } = definition;
  if (typeof name !== 'string' || name === '') throw new TypeError('model name must be a non-empty string');
  if (versions.length === 0) throw new TypeError(`model '${name}': versions must not be empty`);
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 0) {
    throw new TypeError(`model '${name}': maxBatchSize must be a non-negative integer`);
  }
  if (typeof definition.execute !== 'function')
    throw new TypeError(`model '${name}': execute must be a function`);
  return { ...definition, name, versions: [...versions], platform, maxBatchSize };
}
