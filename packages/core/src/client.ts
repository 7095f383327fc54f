import { create } from '@bufbuild/protobuf';
import { encodeTensor } from './codec.js';
import { ErrorCode, InfergateError } from './errors.js';
import { GRPCInferenceService } from './gen/grpc_service_pb.js';
import type { ModelConfig } from './gen/model_config_pb.js';
import { GrpcTransport } from './grpc-transport.js';
import { type ClientOptions, clientOptionsSchema, parseOptions } from './options.js';
import type { Parameters } from './parameters.js';
import { InferResult } from './result.js';
import type { InputTensor } from './tensor.js';
import {
  applyInterceptors,
  type CallOptions,
  type InferRequest,
  type InferTransport,
  type RequestedOutput,
} from './transport.js';

export interface InferOptions extends CallOptions {
  modelVersion?: string;
  /** Request id, echoed back by the server. */
  requestId?: string;
  /** Outputs to return (names or specs); default: all. */
  outputs?: readonly (string | RequestedOutput)[];
  /** Custom request parameters. */
  parameters?: Parameters;
  /** Triton's server-side timeout for the request in its queue, in microseconds. */
  timeoutUs?: number;
}

export interface TensorMetadata {
  name: string;
  datatype: string;
  /** -1 marks a variable dimension. */
  shape: number[];
}

export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

export interface ModelMetadata {
  name: string;
  versions: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

export interface ModelOptions extends CallOptions {
  version?: string;
}

const service = GRPCInferenceService.method;

function toNumbers(shape: readonly bigint[]): number[] {
  return shape.map((dim) => Number(dim));
}

/** Builds the wire request from user-facing inputs; every validation happens here. */
export function buildInferRequest(
  model: string,
  inputs: readonly InputTensor[],
  options: InferOptions = {},
): InferRequest {
  if (typeof model !== 'string' || model === '') {
    throw new InfergateError(ErrorCode.InvalidArgument, 'model must be a non-empty string');
  }
  if (!Array.isArray(inputs))
    throw new InfergateError(ErrorCode.InvalidArgument, 'inputs must be an array of tensors');
  const encoded = inputs.map(encodeTensor);
  const names = new Set<string>();
  for (const input of encoded) {
    if (names.has(input.name))
      throw new InfergateError(ErrorCode.InvalidArgument, `input '${input.name}' is given twice`);
    names.add(input.name);
  }
  let parameters = options.parameters;
  if (options.timeoutUs !== undefined) {
    if (!Number.isSafeInteger(options.timeoutUs) || options.timeoutUs < 0) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `timeoutUs must be a non-negative integer, got ${options.timeoutUs}`,
      );
    }
    parameters = { ...parameters, timeout: { kind: 'int64', value: BigInt(options.timeoutUs) } };
  }
  return {
    model,
    inputs: encoded,
    ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
    ...(options.requestId !== undefined ? { id: options.requestId } : {}),
    ...(options.outputs !== undefined
      ? { outputs: options.outputs.map((output) => (typeof output === 'string' ? { name: output } : output)) }
      : {}),
    ...(parameters !== undefined ? { parameters } : {}),
  };
}

/**
 * The user-facing Triton client. Inference goes through the interceptors to the transport (a gRPC
 * endpoint by default, or a batcher/router given as `transport`); management calls go to the endpoint.
 */
export class TritonClient {
  readonly grpc: GrpcTransport;
  readonly transport: InferTransport;

  constructor(options: ClientOptions & { transport?: InferTransport }) {
    const { transport, ...rest } = options ?? ({} as ClientOptions);
    const resolved = parseOptions(clientOptionsSchema, rest, 'client options');
    this.grpc = new GrpcTransport(resolved);
    this.transport = applyInterceptors(transport ?? this.grpc, resolved.interceptors);
  }

  async serverLive(options: CallOptions = {}): Promise<boolean> {
    const response = await this.grpc.unary(service.serverLive, create(service.serverLive.input), options);
    return response.live;
  }

  async serverReady(options: CallOptions = {}): Promise<boolean> {
    const response = await this.grpc.unary(service.serverReady, create(service.serverReady.input), options);
    return response.ready;
  }

  async modelReady(model: string, options: ModelOptions = {}): Promise<boolean> {
    const request = create(service.modelReady.input, { name: model, version: options.version ?? '' });
    const response = await this.grpc.unary(service.modelReady, request, options, { model });
    return response.ready;
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    const response = await this.grpc.unary(
      service.serverMetadata,
      create(service.serverMetadata.input),
      options,
    );
    return { name: response.name, version: response.version, extensions: [...response.extensions] };
  }

  async modelMetadata(model: string, options: ModelOptions = {}): Promise<ModelMetadata> {
    const request = create(service.modelMetadata.input, { name: model, version: options.version ?? '' });
    const response = await this.grpc.unary(service.modelMetadata, request, options, { model });
    const tensor = (t: { name: string; datatype: string; shape: bigint[] }) => ({
      name: t.name,
      datatype: t.datatype,
      shape: toNumbers(t.shape),
    });
    return {
      name: response.name,
      versions: [...response.versions],
      platform: response.platform,
      inputs: response.inputs.map(tensor),
      outputs: response.outputs.map(tensor),
    };
  }

  /** The model's full configuration (Triton's `inference.ModelConfig`). */
  async modelConfig(model: string, options: ModelOptions = {}): Promise<ModelConfig> {
    const request = create(service.modelConfig.input, { name: model, version: options.version ?? '' });
    const response = await this.grpc.unary(service.modelConfig, request, options, { model });
    if (response.config === undefined) {
      throw new InfergateError(ErrorCode.DataLoss, `the server sent no config for model '${model}'`, {
        model,
      });
    }
    return response.config;
  }

  /** Runs one inference. Inputs are validated and encoded before anything is sent. */
  async infer(
    model: string,
    inputs: readonly InputTensor[],
    options: InferOptions = {},
  ): Promise<InferResult> {
    const request = buildInferRequest(model, inputs, options);
    const response = await this.transport.infer(request, options);
    return new InferResult(response);
  }

  /** Releases the channel (and, later, shared-memory regions). Idempotent. */
  async close(): Promise<void> {
    if (this.transport !== this.grpc) await this.transport.close?.();
    this.grpc.close();
  }
}

export function createTritonClient(options: ClientOptions & { transport?: InferTransport }): TritonClient {
  return new TritonClient(options);
}
