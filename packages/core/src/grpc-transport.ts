import {
  type DescMessage,
  type DescMethodUnary,
  fromBinary,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { abortError, ErrorCode, InfergateError, type InfergateErrorOptions } from './errors.js';
import {
  GRPCInferenceService,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from './gen/grpc_service_pb.js';
import { fromGrpcStatus, messageTooLarge } from './grpc-status.js';
import { assertSafeHeaders } from './header-values.js';
import { createCredentials } from './internal/credentials.js';
import { explainFailedConnect } from './internal/http1-probe.js';
import { type EncodedInferRequest, encodeInferRequest, joinChunks } from './internal/infer-request-writer.js';
import {
  checkRequestedOutputs,
  fromModelInferResponse,
  parseModelInferResponse,
  sharedMemoryOutputs,
} from './internal/infer-wire.js';
import { loadGrpc } from './internal/lazy-modules.js';
import { explainLostMessage, lostMessage } from './internal/lost-message.js';
import { SharedMemoryStager } from './internal/shm-stager.js';
import { RPC_SERVICE, startRpcSpan } from './internal/tracing.js';
import { classifyStreamError } from './internal/triton-messages.js';
import { channelTarget, type Endpoint, parseEndpoint, type ResolvedGrpcTransportOptions } from './options.js';
import type { Parameters } from './parameters.js';
import { inSharedMemory } from './tensor.js';
import type { CallOptions, InferRequest, InferResponse, InferTransport } from './transport.js';

type Serialize<T> = (value: T) => Buffer;

export interface StreamCall {
  call: grpc.ClientDuplexStream<Buffer, ModelStreamInferResponse>;
  /** Ends the span and detaches the abort listener; call once the stream is over. */
  end(failure?: InfergateError): void;
}
type Deserialize<T> = (bytes: Buffer) => T;

const identityBuffer = (value: Buffer) => value;

function methodPath(name: string): string {
  return `/${RPC_SERVICE}/${name}`;
}

/** Request parameters that CallOptions stand for (Triton reads `priority` as uint64). */
function callParameters(request: InferRequest, options: CallOptions): Parameters | undefined {
  if (options.priority === undefined || options.priority === 0) return undefined;
  if (request.parameters?.priority !== undefined) return undefined;
  if (!Number.isSafeInteger(options.priority) || options.priority < 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `priority must be a non-negative integer, got ${options.priority}`,
    );
  }
  return { priority: { kind: 'uint64', value: BigInt(options.priority) } };
}

/**
 * One gRPC channel to one KServe v2 / Triton endpoint. Implements InferTransport for inference and
 * offers typed unary calls for everything else.
 */
export class GrpcTransport implements InferTransport {
  /** The first endpoint (spans, errors); `endpoints` lists all of them. */
  readonly endpoint: Endpoint;
  readonly endpoints: readonly Endpoint[];
  /** The automatic shared-memory path, when `enableGpuIpc` is on. */
  readonly sharedMemory: SharedMemoryStager | undefined;
  private readonly client: grpc.Client;
  private readonly options: ResolvedGrpcTransportOptions;
  private readonly target: string;
  private closed = false;

  constructor(options: ResolvedGrpcTransportOptions) {
    this.options = options;
    this.endpoints = (Array.isArray(options.url) ? options.url : [options.url]).map(parseEndpoint);
    this.endpoint = this.endpoints[0] as Endpoint;
    this.target = channelTarget(this.endpoints);
    const secure = options.tls !== undefined && options.tls !== false ? true : this.endpoint.secure;
    const channelOptions: grpc.ChannelOptions = {
      'grpc.default_compression_algorithm': { none: 0, deflate: 1, gzip: 2 }[options.compression],
      'grpc.max_send_message_length': options.maxMessageBytes,
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.keepalive_time_ms': options.keepalive.timeMs,
      'grpc.keepalive_timeout_ms': options.keepalive.timeoutMs,
      'grpc.keepalive_permit_without_calls': options.keepalive.permitWithoutCalls ? 1 : 0,
      ...options.channelOptions,
    };
    if (typeof options.tls === 'object' && options.tls.serverName !== undefined) {
      channelOptions['grpc.ssl_target_name_override'] = options.tls.serverName;
      channelOptions['grpc.default_authority'] = options.tls.serverName;
    }
    if (this.endpoints.length > 1) {
      channelOptions['grpc.service_config'] = JSON.stringify({
        loadBalancingConfig: [{ [options.loadBalancing]: {} }],
      });
    }
    this.client = new (loadGrpc().Client)(
      this.target,
      createCredentials(secure, options.tls),
      channelOptions,
    );
    this.sharedMemory = options.enableGpuIpc ? new SharedMemoryStager(this, options.sharedMemory) : undefined;
  }

  /** `host:port` of the endpoint (or the address list), for error messages and span attributes. */
  get address(): string {
    return this.endpoints.length === 1 ? this.endpoint.target : this.target;
  }

  private metadata(options: CallOptions): grpc.Metadata {
    const metadata = new (loadGrpc().Metadata)();
    if (this.options.accessToken !== undefined) {
      metadata.set(`triton-grpc-protocol-${this.options.accessHeader}`, this.options.accessToken);
    }
    for (const [key, value] of Object.entries(this.options.headers)) metadata.set(key, value);
    if (options.headers) {
      assertSafeHeaders(options.headers, 'call headers');
      for (const [key, value] of Object.entries(options.headers)) metadata.set(key, value);
    }
    return metadata;
  }

  private deadline(options: CallOptions): grpc.CallOptions {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    if (timeoutMs === undefined) return {};
    if (!(timeoutMs > 0))
      throw new InfergateError(ErrorCode.InvalidArgument, `timeoutMs must be positive, got ${timeoutMs}`);
    return { deadline: Date.now() + timeoutMs };
  }

  private ensureOpen(): void {
    if (this.closed)
      throw new InfergateError(ErrorCode.FailedPrecondition, `the client for ${this.address} is closed`);
  }

  /** Runs one unary RPC with deadline, abort, metadata, span and error mapping. */
  call<Req, Res>(
    method: string,
    serialize: Serialize<Req>,
    deserialize: Deserialize<Res>,
    argument: Req,
    options: CallOptions,
    errorContext: InfergateErrorOptions = {},
  ): Promise<Res> {
    const context = { endpoint: this.address, ...errorContext };
    return new Promise<Res>((resolve, reject) => {
      try {
        this.ensureOpen();
        const { signal } = options;
        if (signal?.aborted) throw abortError(signal, context);
        const metadata = this.metadata(options);
        const callOptions = this.deadline(options);
        const span = startRpcSpan(
          this.options.tracing,
          method,
          this.endpoint,
          metadata,
          context.model ? { 'infergate.model': context.model } : {},
        );
        let onAbort: (() => void) | undefined;
        const call = this.client.makeUnaryRequest(
          methodPath(method),
          serialize,
          deserialize,
          argument,
          metadata,
          callOptions,
          (error, value) => {
            if (onAbort) signal?.removeEventListener('abort', onAbort);
            if (error) {
              const mapped = signal?.aborted ? abortError(signal, context) : fromGrpcStatus(error, context);
              span.end(mapped, error.code);
              void explainFailedConnect(mapped, this.endpoints).then(reject);
            } else {
              span.end(undefined, 0);
              resolve(value as Res);
            }
          },
        );
        if (signal) {
          onAbort = () => call.cancel();
          signal.addEventListener('abort', onAbort, { once: true });
        }
      } catch (error) {
        reject(InfergateError.from(error));
      }
    });
  }

  /** A typed unary RPC of GRPCInferenceService by its generated descriptor. */
  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageShape<I>,
    options: CallOptions,
    errorContext: InfergateErrorOptions = {},
  ): Promise<MessageShape<O>> {
    return this.call(
      method.name,
      (value: MessageShape<I>) => Buffer.from(toBinary(method.input, value)),
      (bytes: Buffer) => fromBinary(method.output, bytes),
      request,
      options,
      errorContext,
    );
  }

  /**
   * The ModelInferRequest as chunks (large tensors not copied), `reserve` bytes left at the start
   * of the first one for a frame header; refused over `maxMessageBytes`.
   */
  encodeInferChunks(
    request: InferRequest,
    options: CallOptions,
    extra?: Parameters,
    reserve = 0,
  ): EncodedInferRequest {
    const parameters = callParameters(request, options);
    // raw_input_contents holds one entry per input that is not in shared memory, in order.
    const encoded = encodeInferRequest(
      request,
      request.inputs.filter((input) => !inSharedMemory(input)).map((input) => input.raw),
      parameters || extra ? { ...parameters, ...extra } : undefined,
      reserve,
    );
    // grpc-js would refuse it too, but as a retryable RESOURCE_EXHAUSTED that a router would fail over.
    if (encoded.byteLength > this.options.maxMessageBytes) {
      throw messageTooLarge('request', encoded.byteLength, this.options.maxMessageBytes, {
        model: request.model,
        endpoint: this.address,
      });
    }
    return encoded;
  }

  private encodeInfer(request: InferRequest, options: CallOptions, extra?: Parameters): Buffer {
    return joinChunks(this.encodeInferChunks(request, options, extra));
  }

  async infer(request: InferRequest, options: CallOptions = {}): Promise<InferResponse> {
    const stager = this.sharedMemory;
    if (stager?.wants(request)) {
      const staged = await stager.stage(request);
      if (staged !== undefined) {
        stager.recordShared();
        try {
          const response = await this.inferOnce(staged.request, options);
          staged.release(true);
          return response;
        } catch (error) {
          staged.release(false);
          throw error;
        }
      }
      stager.recordPlain();
    }
    return this.inferOnce(request, options);
  }

  private inferOnce(request: InferRequest, options: CallOptions): Promise<InferResponse> {
    const context = { model: request.model, ...(request.id ? { requestId: request.id } : {}) };
    let bytes: Buffer;
    try {
      bytes = this.encodeInfer(request, options);
    } catch (error) {
      return Promise.reject(InfergateError.from(error, ErrorCode.InvalidArgument));
    }
    return this.call(
      GRPCInferenceService.method.modelInfer.name,
      identityBuffer,
      parseModelInferResponse,
      bytes,
      options,
      context,
    ).then(
      (message) => {
        const response = fromModelInferResponse(message, sharedMemoryOutputs(request));
        checkRequestedOutputs(request, response);
        return response;
      },
      async (error: unknown) => {
        throw lostMessage(error) && !options.signal?.aborted
          ? await explainLostMessage(this, request, error)
          : error;
      },
    );
  }

  /**
   * Opens a ModelStreamInfer call (bidirectional): metadata, deadline, span and abort wiring.
   * Callers write serialized requests with `encodeStreamRequest` and read ModelStreamInferResponse.
   */
  openStreamCall(options: CallOptions, model?: string): StreamCall {
    this.ensureOpen();
    const metadata = this.metadata(options);
    const method = GRPCInferenceService.method.modelStreamInfer.name;
    const span = startRpcSpan(
      this.options.tracing,
      method,
      this.endpoint,
      metadata,
      model ? { 'infergate.model': model } : {},
    );
    const call = this.client.makeBidiStreamRequest(
      methodPath(method),
      identityBuffer,
      (buffer: Buffer) => fromBinary(ModelStreamInferResponseSchema, buffer) as ModelStreamInferResponse,
      metadata,
      this.deadline(options),
    );
    const { signal } = options;
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    let ended = false;
    return {
      call,
      end: (failure?: InfergateError) => {
        if (ended) return;
        ended = true;
        signal?.removeEventListener('abort', onAbort);
        span.end(failure, failure?.grpcCode ?? (failure ? undefined : 0));
      },
    };
  }

  /** Maps an error thrown while reading a stream to an InfergateError. */
  streamError(
    error: unknown,
    signal: AbortSignal | undefined,
    context: InfergateErrorOptions,
  ): InfergateError {
    if (error instanceof InfergateError) return error;
    if (signal?.aborted) return abortError(signal, context);
    if (typeof (error as { code?: unknown }).code === 'number')
      return fromGrpcStatus(error as grpc.ServiceError, context);
    return InfergateError.from(error);
  }

  /** Serializes a request for ModelStreamInfer, asking for Triton's empty final response. */
  encodeStreamRequest(request: InferRequest, options: CallOptions): Buffer {
    return this.encodeInfer(request, options, { triton_enable_empty_final_response: true });
  }

  /**
   * One request on ModelStreamInfer, read until Triton's final-response flag. Works for decoupled
   * models (0..N responses) and plain ones (one response). Leaving the loop early cancels the RPC.
   */
  async *stream(request: InferRequest, options: CallOptions = {}): AsyncIterable<InferResponse> {
    const context: InfergateErrorOptions = {
      endpoint: this.address,
      model: request.model,
      ...(request.id ? { requestId: request.id } : {}),
    };
    const { signal } = options;
    if (signal?.aborted) throw abortError(signal, context);
    const bytes = this.encodeStreamRequest(request, options);
    const bound = sharedMemoryOutputs(request);
    const stream = this.openStreamCall(options, request.model);
    const { call } = stream;
    let failure: InfergateError | undefined;
    let finished = false;
    try {
      call.write(bytes);
      call.end();
      let final = false;
      for await (const message of call as AsyncIterable<ModelStreamInferResponse>) {
        if (message.errorMessage !== '') throw classifyStreamError(message.errorMessage, context);
        if (message.inferResponse === undefined) continue;
        const response = fromModelInferResponse(message.inferResponse, bound);
        final = response.parameters.triton_final_response === true;
        if (response.outputs.length > 0 || !final) yield response;
        if (final) break;
      }
      // We ask for Triton's final-response flag: a stream that closes without it was cut short.
      if (!final) {
        throw new InfergateError(
          ErrorCode.Unavailable,
          'the stream ended before the final response (triton_final_response)',
          context,
        );
      }
      finished = true;
    } catch (error) {
      failure = await explainFailedConnect(this.streamError(error, signal, context), this.endpoints);
      throw failure;
    } finally {
      if (!finished) call.cancel();
      stream.end(failure);
    }
  }

  /**
   * Releases shared-memory regions (unregistering them), then closes the channel; in-flight calls
   * fail with CANCELLED/UNAVAILABLE. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.sharedMemory?.close();
    this.closed = true;
    this.client.close();
  }
}
