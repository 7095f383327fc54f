import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import {
  ChannelConnectivity,
  type ConnectivityListener,
  type ConnectivitySource,
  type ConnectivityState,
} from './connectivity.js';
import { abortError, ErrorCode, InfergateError, type InfergateErrorOptions } from './errors.js';
import type { ModelInferResponse, ModelStreamInferResponse } from './gen/grpc_service_pb.js';
import { fromGrpcStatus } from './grpc-status.js';
import { writeFrameHeader } from './h2/grpc-frames.js';
import { H2Engine } from './h2/h2-engine.js';
import { chooseEngine, h2EngineOptions, type InferenceEngine } from './h2/h2-options.js';
import { type H2Request, type H2Site, inferOverH2 } from './h2/infer-over-h2.js';
import type { MessagePool } from './h2/message-pool.js';
import { assertSafeHeaders } from './header-values.js';
import { grpcChannelOptions } from './internal/channel-options.js';
import { type ChannelSecurity, checkChannelSecurity, createCredentials } from './internal/credentials.js';
import {
  armBeyondGrpcJs,
  beyondGrpcJsTimer,
  expireStream,
  grpcJsDeadline,
} from './internal/grpc-js-deadline.js';
import { type Deserialize, identityBuffer, methodPath, type Serialize } from './internal/grpc-method.js';
import { explainFailedConnect } from './internal/http1-probe.js';
import { type EncodedInferRequest, encodeForCall, joinChunks } from './internal/infer-request-writer.js';
import {
  checkRequestedOutputs,
  fromModelInferResponse,
  sharedMemoryOutputs,
} from './internal/infer-response.js';
import {
  answerGoesIntoCallerMemory,
  checkOutputsInto,
  writeOutputsIntoAt,
} from './internal/infer-response-into.js';
import { loadedGrpcWire, loadGrpc, loadGrpcWire } from './internal/lazy-modules.js';
import { clearLongTimer, type LongTimer } from './internal/long-timer.js';
import { explainLostMessage, lostMessage } from './internal/lost-message.js';
import { SharedMemoryStager } from './internal/shm-stager.js';
import { metadataSetter, startRpcSpan } from './internal/tracing.js';
import { deadlineExceeded, type LoadedForCall, waitForGrpcWire } from './internal/wait-for-grpc-wire.js';
import { channelTarget, type Endpoint, parseEndpoint, type ResolvedGrpcTransportOptions } from './options.js';
import type { Parameters } from './parameters.js';
import type { CallOptions, InferRequest, InferResponse, InferTransport } from './transport.js';

export interface StreamCall {
  call: grpc.ClientDuplexStream<Buffer, ModelStreamInferResponse>;
  /** Ends the span and detaches the abort listener; call once the stream is over. */
  end(failure?: InfergateError): void;
}
/** What every ModelStreamInfer request asks for: Triton's empty final response, to know the end. */
const STREAM_PARAMETERS: Parameters = { triton_enable_empty_final_response: true };
// The methods' names, written out so that calls need no descriptor before grpc-wire.ts loads.
const MODEL_INFER = 'ModelInfer';
const MODEL_STREAM_INFER = 'ModelStreamInfer';

/**
 * One gRPC channel to one KServe v2 / Triton endpoint. Implements InferTransport for inference and
 * offers typed unary calls for everything else.
 */
export class GrpcTransport implements InferTransport, ConnectivitySource {
  /** The first endpoint (spans, errors); `endpoints` lists all of them. */
  readonly endpoint: Endpoint;
  readonly endpoints: readonly Endpoint[];
  /** The automatic shared-memory path, when `enableGpuIpc` is on. */
  readonly sharedMemory: SharedMemoryStager | undefined;
  /** The grpc-js channel, made on first use (see `client`). */
  #client: grpc.Client | undefined;
  readonly #channelOptions: grpc.ChannelOptions;
  readonly #security: ChannelSecurity;
  /**
   * What carries inference (`infer`, `inferStream`): `http2` unless the options chose grpc-js, or
   * gave `channelOptions` only grpc-js understands (see the `engine` option).
   */
  readonly engine: InferenceEngine;
  /** The lean HTTP/2 client that carries inference when `engine` is "http2". */
  private readonly h2: H2Engine | undefined;
  private readonly options: ResolvedGrpcTransportOptions;
  private readonly target: string;
  private closed = false;
  /**
   * The headers every call carries (the access token's, the client's `headers` lowercased), made
   * once: per call they cost an `Object.entries` array and the token header's name. `#private`, so
   * that inspecting or serializing the transport cannot show the token (options hide it, see
   * hide-secrets.ts).
   */
  readonly #fixedHeaders: readonly (readonly [key: string, value: string])[];
  /** What the http2 engine's calls need of this transport, made on first use (see `h2Site`). */
  #site: H2Site | undefined;
  /** The channel's connectivity watch (connectivity.ts), made on first use. */
  private connectivity: ChannelConnectivity | undefined;

  constructor(options: ResolvedGrpcTransportOptions) {
    this.options = options;
    this.endpoints = (Array.isArray(options.url) ? options.url : [options.url]).map(parseEndpoint);
    this.endpoint = this.endpoints[0] as Endpoint;
    this.target = channelTarget(this.endpoints);
    const secure = options.tls !== undefined && options.tls !== false ? true : this.endpoint.secure;
    this.#channelOptions = grpcChannelOptions(options, this.endpoints.length);
    this.#security = checkChannelSecurity(secure, options.tls);
    this.sharedMemory = options.enableGpuIpc ? new SharedMemoryStager(this, options.sharedMemory) : undefined;
    const fixedHeaders: [string, string][] = [];
    if (options.accessToken !== undefined) {
      fixedHeaders.push([`triton-grpc-protocol-${options.accessHeader}`, options.accessToken]);
    }
    for (const [key, value] of Object.entries(options.headers)) fixedHeaders.push([key.toLowerCase(), value]);
    this.#fixedHeaders = fixedHeaders;
    this.engine = chooseEngine(options);
    this.h2 =
      this.engine === 'http2' ? new H2Engine(this.endpoints, h2EngineOptions(options, secure)) : undefined;
    // On grpc-js, inference needs grpc-wire.ts (lazy-modules.ts): start loading it now, in the
    // background, so that a first call made later finds it loaded (one made at once waits for it; a
    // failure surfaces on that call). The http2 engine's inference does not need it: other calls
    // load it when they are made, and a process that only infers never does.
    if (this.engine === 'grpc-js') {
      // grpc-js carries inference: its channel is made now, as the http2 engine's connections are.
      void this.client;
      loadGrpcWire().catch(() => {});
    }
  }

  /**
   * The grpc-js channel that carries the calls other than inference on the http2 engine (and all of
   * them on grpc-js). Made on first use: grpc-js is a heavy import that a process which only infers
   * on the http2 engine never needs (lazy-modules.ts); the TLS options were checked when the
   * transport was made.
   */
  private get client(): grpc.Client {
    this.#client ??= new (loadGrpc().Client)(
      this.target,
      createCredentials(this.#security),
      this.#channelOptions,
    );
    return this.#client;
  }

  /**
   * The connectivity of what carries inference (the http2 engine's connections, or the grpc-js
   * channel) now; `connect: true` also dials when idle (see connectivity.ts).
   */
  connectivityState(connect = false): ConnectivityState {
    if (this.h2) return this.h2.connectivityState(connect);
    this.connectivity ??= new ChannelConnectivity(this.client.getChannel());
    return this.connectivity.connectivityState(connect);
  }

  /**
   * Reports each change of the connectivity of what carries inference (a router ejects a target on
   * a lost one).
   */
  watchConnectivity(listener: ConnectivityListener): () => void {
    if (this.h2) return this.h2.watchConnectivity(listener);
    this.connectivity ??= new ChannelConnectivity(this.client.getChannel());
    return this.connectivity.watchConnectivity(listener);
  }

  /** `host:port` of the endpoint (or the address list), for error messages and span attributes. */
  get address(): string {
    return this.endpoints.length === 1 ? this.endpoint.target : this.target;
  }

  private metadata(options: CallOptions): grpc.Metadata {
    const metadata = new (loadGrpc().Metadata)();
    this.eachHeader(options, (key, value) => metadata.set(key, value));
    return metadata;
  }

  private eachHeader(options: CallOptions, set: (key: string, value: string) => void): void {
    for (const [key, value] of this.#fixedHeaders) set(key, value);
    if (options.headers) {
      assertSafeHeaders(options.headers, 'call headers');
      for (const [key, value] of Object.entries(options.headers)) set(key.toLowerCase(), value);
    }
  }

  /** The call's deadline in ms; undefined for none, which `timeoutMs: Infinity` asks for too. */
  private timeoutOf(options: CallOptions): number | undefined {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    if (timeoutMs !== undefined && !(timeoutMs > 0))
      throw new InfergateError(ErrorCode.InvalidArgument, `timeoutMs must be positive, got ${timeoutMs}`);
    return timeoutMs === Number.POSITIVE_INFINITY ? undefined : timeoutMs;
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
        const timeoutMs = this.timeoutOf(options);
        const callOptions = grpcJsDeadline(timeoutMs);
        const span = startRpcSpan(
          this.options.tracing,
          method,
          this.endpoint,
          metadata,
          metadataSetter,
          context.model ? context.model : undefined,
        );
        let onAbort: (() => void) | undefined;
        // grpc-js arms no timer for a deadline beyond setTimeout's 2^31 − 1 ms (it leaves it to the
        // server's grpc-timeout): this one ends the call when it is due, whatever the server does.
        let longDeadline: LongTimer | undefined;
        let expired = false;
        const call = this.client.makeUnaryRequest(
          methodPath(method),
          serialize,
          deserialize,
          argument,
          metadata,
          callOptions,
          (error, value) => {
            if (onAbort) signal?.removeEventListener('abort', onAbort);
            clearLongTimer(longDeadline);
            if (error) {
              const mapped = signal?.aborted
                ? abortError(signal, context)
                : expired
                  ? deadlineExceeded(context)
                  : fromGrpcStatus(error, context);
              span.end(mapped, error.code);
              void explainFailedConnect(mapped, this.endpoints, signal).then(reject);
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
        // Checked first, so that a call with an ordinary deadline makes no closure for it.
        if (beyondGrpcJsTimer(timeoutMs)) {
          longDeadline = armBeyondGrpcJs(
            timeoutMs,
            () => {
              expired = true;
              call.cancel();
            },
            undefined,
          );
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
    const wire = loadedGrpcWire();
    if (wire === undefined)
      return this.waitForWire(options, errorContext).then((loaded) =>
        this.unary(method, request, loaded.options, errorContext),
      );
    return this.call(
      method.name,
      (value: MessageShape<I>) => Buffer.from(wire.toBinary(method.input, value)),
      (bytes: Buffer) => wire.fromBinary(method.output, bytes),
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
    return encodeForCall(request, options, extra, reserve, this.options.maxMessageBytes, this.address);
  }

  private encodeInfer(request: InferRequest, options: CallOptions, extra?: Parameters): Buffer {
    return joinChunks(this.encodeInferChunks(request, options, extra));
  }

  async infer(request: InferRequest, options: CallOptions = {}): Promise<InferResponse> {
    // `into` refused before anything is sent (decision 0026), for callers below the client too.
    if (request.outputs !== undefined) checkOutputsInto(request.outputs);
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
    // One context object, built field by field (spreads of conditional literals allocate each).
    const context: InfergateErrorOptions = this.h2
      ? { endpoint: this.address, model: request.model }
      : { model: request.model };
    if (request.id) context.requestId = request.id;
    let sent: Promise<InferResponse>;
    try {
      // The http2 engine needs nothing of grpc-wire.ts (infer-over-h2.ts); grpc-js decodes with it.
      if (this.h2) {
        // Every output goes into the caller's memory: receive the answer into pooled memory, which
        // goes back once `read` copied the outputs out (decision 0026).
        const pool = answerGoesIntoCallerMemory(request) ? this.h2.messagePool : undefined;
        const pooled = pool !== undefined;
        const read = (message: ModelInferResponse) =>
          readAnswer(request, message, pooled, options.signal, context);
        sent = inferOverH2(
          this.h2,
          this.h2Site,
          this.h2Request(request, options, undefined, pool),
          request.model,
          context,
          read,
        );
      } else
        sent = this.inferOverGrpcJs(request, options, context).then((message) =>
          readAnswer(request, message, false, options.signal, { endpoint: this.address, ...context }),
        );
    } catch (error) {
      return Promise.reject(InfergateError.from(error, ErrorCode.InvalidArgument));
    }
    return sent.then(undefined, async (error: unknown) => {
      throw lostMessage(error) && !options.signal?.aborted
        ? await explainLostMessage(this, request, error)
        : error;
    });
  }

  private inferOverGrpcJs(
    request: InferRequest,
    options: CallOptions,
    context: InfergateErrorOptions,
  ): Promise<ModelInferResponse> {
    const wire = loadedGrpcWire();
    if (wire === undefined)
      return this.waitForWire(options, context).then((loaded) =>
        this.inferOverGrpcJs(request, loaded.options, context),
      );
    return this.call(
      MODEL_INFER,
      identityBuffer,
      wire.parseModelInferResponse,
      this.encodeInfer(request, options),
      options,
      context,
    );
  }

  /**
   * grpc-wire.ts for a call made before it loaded, within the call's deadline and abort signal;
   * the options handed back carry what is left of the deadline.
   * @internal
   */
  waitForWire<O extends CallOptions>(
    options: O,
    errorContext: InfergateErrorOptions = {},
  ): Promise<LoadedForCall<O>> {
    return waitForGrpcWire(options, this.options.timeoutMs, { endpoint: this.address, ...errorContext });
  }

  /** The request for the http2 engine: frame header in front, large tensors as their own chunks. */
  private h2Request(
    request: InferRequest,
    options: CallOptions,
    extra?: Parameters,
    pool?: MessagePool,
  ): H2Request {
    this.ensureOpen();
    const encoded = this.encodeInferChunks(request, options, extra, 5);
    writeFrameHeader(encoded.chunks[0] as Uint8Array, 0, encoded.byteLength);
    // The same headers as `eachHeader`, written straight into the record (no callback per call).
    const headers: Record<string, string> = {};
    for (const [key, value] of this.#fixedHeaders) headers[key] = value;
    if (options.headers) {
      assertSafeHeaders(options.headers, 'call headers');
      for (const [key, value] of Object.entries(options.headers)) headers[key.toLowerCase()] = value;
    }
    const timeoutMs = this.timeoutOf(options);
    return { chunks: encoded.chunks, headers, timeoutMs, signal: options.signal, pool };
  }

  private get h2Site(): H2Site {
    if (this.#site === undefined) {
      const { tracing, maxMessageBytes } = this.options;
      this.#site = { endpoint: this.endpoint, endpoints: this.endpoints, tracing, maxMessageBytes };
    }
    return this.#site;
  }

  /**
   * Opens a ModelStreamInfer call (bidirectional): metadata, deadline, span and abort wiring.
   * Callers write serialized requests with `encodeStreamRequest` and read ModelStreamInferResponse.
   * The decoder of those messages loads with the process's first call other than an inference on
   * the http2 engine (which needs none of it): open this after such a call, or after
   * `await transport.ready()`; before, it throws FAILED_PRECONDITION.
   */
  openStreamCall(options: CallOptions, model?: string): StreamCall {
    this.ensureOpen();
    const wire = loadedGrpcWire();
    if (wire === undefined)
      throw new InfergateError(
        ErrorCode.FailedPrecondition,
        'openStreamCall() before the gRPC message code loaded: await transport.ready() first',
        { endpoint: this.address },
      );
    const metadata = this.metadata(options);
    const timeoutMs = this.timeoutOf(options);
    const method = MODEL_STREAM_INFER;
    const span = startRpcSpan(
      this.options.tracing,
      method,
      this.endpoint,
      metadata,
      metadataSetter,
      model ? model : undefined,
    );
    const call = this.client.makeBidiStreamRequest(
      methodPath(method),
      identityBuffer,
      (buffer: Buffer) =>
        wire.fromBinary(wire.ModelStreamInferResponseSchema, buffer) as ModelStreamInferResponse,
      metadata,
      grpcJsDeadline(timeoutMs),
    );
    const { signal } = options;
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    // grpc-js arms no timer for a deadline past 2^31 − 1 ms: this one ends the stream when it is due,
    // as grpc-js would (status DEADLINE_EXCEEDED), and goes with the call's status.
    const longDeadline = armBeyondGrpcJs(timeoutMs, expireStream, call);
    if (longDeadline !== undefined) call.once('status', () => clearLongTimer(longDeadline));
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

  /**
   * Loads what calls need of the protobuf runtime and the generated descriptors (every call does on
   * its own; `openStreamCall`, which is synchronous, needs it done). Resolves at once after the first.
   */
  async ready(): Promise<void> {
    await loadGrpcWire();
  }

  /** Serializes a request for ModelStreamInfer, asking for Triton's empty final response. */
  encodeStreamRequest(request: InferRequest, options: CallOptions): Buffer {
    if (request.outputs !== undefined) checkOutputsInto(request.outputs, true);
    return this.encodeInfer(request, options, STREAM_PARAMETERS);
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
    if (request.outputs !== undefined) checkOutputsInto(request.outputs, true);
    let wire = loadedGrpcWire();
    let callOptions = options;
    if (wire === undefined) ({ wire, options: callOptions } = await this.waitForWire(options, context));
    const bound = wire.sharedMemoryOutputs(request);
    const stream = this.h2
      ? wire.streamOverH2(
          this.h2,
          this.h2Site,
          this.h2Request(request, callOptions, STREAM_PARAMETERS),
          request.model,
        )
      : wire.grpcOneRequestStream(this, request, callOptions);
    yield* wire.readStream(stream, bound, context, async (error) =>
      explainFailedConnect(this.streamError(error, signal, context), this.endpoints, signal),
    );
  }

  /**
   * Releases shared-memory regions (unregistering them), then closes the channel; in-flight calls
   * fail with CANCELLED/UNAVAILABLE. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.sharedMemory?.close();
    this.closed = true;
    this.h2?.close();
    this.#client?.close();
  }
}

/**
 * The InferResponse of a parsed answer, with the outputs the request bound to `into` written there.
 * `pooled`: the message's memory is reused after this returns, so every other output is copied too.
 */
function readAnswer(
  request: InferRequest,
  message: ModelInferResponse,
  pooled: boolean,
  signal: AbortSignal | undefined,
  context: InfergateErrorOptions,
): InferResponse {
  const response = fromModelInferResponse(message, sharedMemoryOutputs(request));
  checkRequestedOutputs(request, response);
  return writeOutputsIntoAt(request, response, { copyOthers: pooled, signal }, context);
}
