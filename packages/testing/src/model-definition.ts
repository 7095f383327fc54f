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
  /**
   * The wire bytes, a view into the received message (no copy), valid during this request only:
   * as Triton's input buffers, the memory of a large gRPC request (64 KiB or more, on the default
   * `lean` transport) is used again for a later request once this one's answer is written. An
   * input bound to shared memory is a view of the server's copy of the region, as Triton's is a
   * pointer into its mapping: the next request that reads those bytes rewrites it. Copy what must
   * outlive this request (outputs that reuse it are written before the memory is reused).
   */
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
  /** Every request parameter as sent (including sequence_id, priority, timeout, …). */
  readonly parameters: Parameters;
  /** The `priority` parameter (0 = the model's default priority level). */
  readonly priority: number;
  /** The `timeout` parameter, in microseconds (0 = none). */
  readonly timeoutUs: number;
  /** The inputs in request order. */
  readonly inputs: readonly ExecuteInput[];
  /** The input called `name`; throws INVALID_ARGUMENT if the request did not carry it. */
  input(name: string): ExecuteInput;
  /** Outputs the response will carry: those requested, or every declared output. */
  readonly requestedOutputs: readonly string[];
  /**
   * True when the request named its outputs. Without names, as in Triton, the response carries the
   * declared outputs the model produced and leaves out the ones it did not.
   */
  readonly outputsNamed: boolean;
  /** The batch dimension (`shape[0]` of the first input) for batching models, else 1. */
  readonly batchSize: number;
  /** Request metadata (gRPC headers) as plain strings. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** The sequence a request of a `sequenceBatching` model belongs to (Triton's sequence batcher). */
export interface SequenceContext {
  /** The `sequence_id` (correlation ID) as sent: a number, a bigint above 2^53, or a string. */
  readonly id: number | bigint | string;
  readonly start: boolean;
  readonly end: boolean;
  /** Per-sequence state the model keeps between requests (Triton's implicit state); freed at end. */
  readonly state: Record<string, unknown>;
}

export interface ExecuteContext {
  /** Aborts when the client cancels, the deadline passes or the server is killed. */
  readonly signal: AbortSignal;
  /** Present for models with `sequenceBatching: true`. */
  readonly sequence?: SequenceContext;
  /**
   * Marks the end of queueing: time before the call counts as `queue`, time after as
   * `compute_infer` in ModelStatistics. Without a call the whole execution is compute_infer.
   * `startedAt` (`process.hrtime.bigint()`'s clock, ns): when compute started, for a model that
   * marks it after that instant; by default, now.
   */
  computeStarted(startedAt?: bigint): void;
}

/**
 * An output: either values to encode (`data`, as for a client input) or ready wire bytes (`raw`),
 * which pass through without a copy: a large `raw` is written to the socket from its own memory
 * after `execute` returns, so a model must not change those bytes afterwards.
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
  /** Computes the one response of a request. Required unless `executeStream` is given. */
  execute?(
    request: ExecuteRequest,
    context: ExecuteContext,
  ): Promise<readonly ExecuteOutput[]> | readonly ExecuteOutput[];
  /**
   * Produces 0..N responses for one request (each yielded array is one response). Required for
   * `decoupled` models; for other models it must yield exactly once. Stop when `context.signal`
   * aborts (the stream was cancelled). Takes precedence over `execute`.
   */
  executeStream?(request: ExecuteRequest, context: ExecuteContext): AsyncIterable<readonly ExecuteOutput[]>;
  /**
   * Decoupled transaction policy: 0..N responses per request, ModelStreamInfer only (ModelInfer
   * answers UNIMPLEMENTED as Triton does). @default false
   */
  decoupled?: boolean;
  /**
   * Stateful model behind Triton's sequence batcher: requests carry `sequence_id`,
   * `sequence_start`, `sequence_end`; `execute` gets `context.sequence`. @default false
   */
  sequenceBatching?: boolean;
  /** Class labels per output name, for classification results ("value:index:label"). */
  labels?: Readonly<Record<string, readonly string[]>>;
  /** Models this one uses (ensemble steps): unloaded with it when `unload_dependents` is true. */
  composingModels?: readonly string[];
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
  if (typeof definition.execute !== 'function' && typeof definition.executeStream !== 'function')
    throw new TypeError(`model '${name}': execute or executeStream must be a function`);
  if (definition.decoupled === true && typeof definition.executeStream !== 'function')
    throw new TypeError(`model '${name}': a decoupled model needs executeStream`);
  return { ...definition, name, versions: [...versions], platform, maxBatchSize };
}
