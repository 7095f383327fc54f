import { ErrorCode, InfergateError } from './errors.js';
import { Extension, withExtension } from './extension.js';
import type { ModelConfig } from './gen/model_config_pb.js';
import { GrpcTransport } from './grpc-transport.js';
import type { InferOptions } from './infer-request.js';
import type * as GrpcWire from './internal/grpc-wire.js';
import { hideSecrets } from './internal/hide-secrets.js';
import { inferStreamThrough, inferThrough } from './internal/infer-calls.js';
import { loadedGrpcWire } from './internal/lazy-modules.js';
import { ServerExtensions } from './internal/server-extensions.js';
import {
  type ClientOptions,
  parseClientOptions,
  type ResolvedClientOptions,
  type ResolvedGrpcTransportOptions,
} from './options.js';
import type {
  LoadModelOptions,
  RepositoryIndexOptions,
  RepositoryModel,
  UnloadModelOptions,
} from './repository.js';
import type { InferResult } from './result.js';
import { newSequenceId, Sequence, type SequenceOptions } from './sequence.js';
import type { LogSettings, TraceSettings, TraceSettingsOptions, TraceSettingsUpdate } from './settings.js';
import type {
  CudaRegionStatus,
  RegisterCudaRegion,
  RegisterSystemRegion,
  SystemRegionStatus,
} from './shared-memory-rpc.js';
import { type ModelStatistics, toModelStatistics } from './statistics.js';
import { StreamSession } from './stream-session.js';
import type { InputTensor } from './tensor.js';
import { applyInterceptors, type CallOptions, type InferTransport } from './transport.js';

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

function toNumbers(shape: readonly bigint[]): number[] {
  return shape.map((dim) => Number(dim));
}

/**
 * The user-facing Triton client. Inference goes through the interceptors to the transport (a gRPC
 * endpoint by default, or a batcher/router given as `transport`); management calls go to the endpoint.
 */
export class TritonClient {
  readonly transport: InferTransport;
  readonly options: ResolvedClientOptions;
  readonly #grpc: GrpcTransport | undefined;
  readonly #extensions = new ServerExtensions((options) => this.serverMetadata(options));
  readonly #sessions = new Set<StreamSession>();

  constructor(options: ClientOptions & { transport?: InferTransport }) {
    const { transport, ...rest } = options ?? ({} as ClientOptions);
    this.options = hideSecrets(parseClientOptions(rest, 'client options'));
    if (this.options.url === undefined && transport === undefined) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        'invalid client options: url: required unless a transport is given',
      );
    }
    this.#grpc =
      this.options.url === undefined
        ? undefined
        : new GrpcTransport(this.options as ResolvedGrpcTransportOptions);
    this.transport = applyInterceptors(
      (transport ?? this.#grpc) as InferTransport,
      this.options.interceptors,
    );
  }

  /** True when the client has a gRPC endpoint (a `url`), so management calls can work. */
  get hasEndpoint(): boolean {
    return this.#grpc !== undefined;
  }

  /**
   * The gRPC endpoint that management calls (health, metadata, repository, shared memory) use.
   * Throws FAILED_PRECONDITION on a client built with only a `transport`.
   */
  get grpc(): GrpcTransport {
    if (this.#grpc === undefined) {
      throw new InfergateError(
        ErrorCode.FailedPrecondition,
        'this client has no url: management calls need a gRPC endpoint (pass url)',
      );
    }
    return this.#grpc;
  }

  /**
   * Runs a management call that lives in grpc-wire.ts; the endpoint is looked up first, so that a
   * client without one still throws at once. A call made before that code loaded waits for it
   * within its deadline and abort signal, and gets options with what is left of the deadline.
   */
  #withWire<O extends CallOptions, T>(
    options: O,
    call: (wire: typeof GrpcWire, grpc: GrpcTransport, callOptions: O) => Promise<T>,
  ): Promise<T> {
    const grpc = this.grpc;
    const wire = loadedGrpcWire();
    return wire
      ? call(wire, grpc, options)
      : grpc.waitForWire(options).then((loaded) => call(loaded.wire, grpc, loaded.options));
  }

  /** The message factory and the service's descriptors, as `#withWire` hands them out. */
  #serviceWire<O extends CallOptions>(options: O) {
    return this.#withWire(options, async (wire, _grpc, callOptions) => ({
      create: wire.create,
      service: wire.GRPCInferenceService.method,
      callOptions,
    }));
  }

  // ── health and metadata ────────────────────────────────────────────────────────────────────

  async serverLive(options: CallOptions = {}): Promise<boolean> {
    const { create, service, callOptions } = await this.#serviceWire(options);
    return (await this.grpc.unary(service.serverLive, create(service.serverLive.input), callOptions)).live;
  }

  async serverReady(options: CallOptions = {}): Promise<boolean> {
    const { create, service, callOptions } = await this.#serviceWire(options);
    return (await this.grpc.unary(service.serverReady, create(service.serverReady.input), callOptions)).ready;
  }

  async modelReady(model: string, options: ModelOptions = {}): Promise<boolean> {
    const { create, service, callOptions } = await this.#serviceWire(options);
    const request = create(service.modelReady.input, { name: model, version: options.version ?? '' });
    return (await this.grpc.unary(service.modelReady, request, callOptions, { model })).ready;
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    const { create, service, callOptions } = await this.#serviceWire(options);
    const response = await this.grpc.unary(
      service.serverMetadata,
      create(service.serverMetadata.input),
      callOptions,
    );
    return { name: response.name, version: response.version, extensions: [...response.extensions] };
  }

  /** The server's protocol extensions (ServerMetadata.extensions), fetched once and cached. */
  extensions(options: { refresh?: boolean } & CallOptions = {}): Promise<ReadonlySet<string>> {
    return this.#extensions.get(options);
  }

  /** True when the server advertises the extension (see `Extension`). */
  async supports(extension: string): Promise<boolean> {
    return (await this.extensions()).has(extension);
  }

  /** Fails with UNIMPLEMENTED naming the extension unless the server advertises it. */
  async requireExtension(extension: string, operation: string): Promise<void> {
    const extensions = await this.extensions();
    if (!extensions.has(extension)) {
      throw new InfergateError(
        ErrorCode.Unimplemented,
        `the server at ${this.grpc.address} does not support the '${extension}' extension needed by ${operation} (it lists: ${[...extensions].join(', ') || 'none'})`,
        { endpoint: this.grpc.address, details: { extension } },
      );
    }
  }

  async modelMetadata(model: string, options: ModelOptions = {}): Promise<ModelMetadata> {
    const { create, service, callOptions } = await this.#serviceWire(options);
    const request = create(service.modelMetadata.input, { name: model, version: options.version ?? '' });
    const response = await this.grpc.unary(service.modelMetadata, request, callOptions, { model });
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
    const { create, service, callOptions } = await this.#serviceWire(options);
    const request = create(service.modelConfig.input, { name: model, version: options.version ?? '' });
    const response = await withExtension(
      Extension.ModelConfiguration,
      'modelConfig()',
      this.grpc.address,
      () => this.grpc.unary(service.modelConfig, request, callOptions, { model }),
    );
    if (response.config === undefined) {
      throw new InfergateError(ErrorCode.DataLoss, `the server sent no config for model '${model}'`, {
        model,
      });
    }
    return response.config;
  }

  // ── inference ─────────────────────────────────────────────────────────────────────────────

  /** Runs one inference. Inputs are validated and encoded before anything is sent. */
  infer(model: string, inputs: readonly InputTensor[], options: InferOptions = {}): Promise<InferResult> {
    return inferThrough(this.transport, model, inputs, options);
  }

  /**
   * One request, many responses (decoupled models): iterates until Triton's final-response flag.
   * Leaving the loop early, or aborting `signal`, cancels the RPC.
   */
  inferStream(
    model: string,
    inputs: readonly InputTensor[],
    options: InferOptions = {},
  ): AsyncIterable<InferResult> {
    return inferStreamThrough(this.transport, model, inputs, options);
  }

  /** A bidirectional stream for many requests; responses are matched to requests by id. */
  openStream(options: CallOptions = {}): StreamSession {
    const session = new StreamSession(this.grpc, options);
    this.#sessions.add(session);
    return session;
  }

  /**
   * A sequence of a stateful model: the id is allocated, START and END are set, and every request
   * goes to one endpoint (with several urls, a channel pinned to one of them; through a custom
   * transport such as a router, which pins by the `sequence_id` parameter).
   */
  async sequence(model: string, options: SequenceOptions = {}): Promise<Sequence> {
    const id = options.id ?? newSequenceId();
    const grpc = this.#grpc;
    if (grpc !== undefined) await this.requireExtension(Extension.Sequence, 'sequence()');
    // A custom transport (a router) pins sequences itself, by the sequence_id parameter.
    if (grpc === undefined || this.transport !== grpc) {
      return new Sequence(model, this.transport, async () => {}, { id });
    }
    const { endpoints } = grpc;
    if (endpoints.length === 1) return new Sequence(model, grpc, async () => {}, { id });
    const key = typeof id === 'string' ? hash(id) : Number(BigInt.asUintN(32, BigInt(id)));
    const endpoint = endpoints[key % endpoints.length] as (typeof endpoints)[number];
    const url = `${endpoint.secure ? 'grpcs' : 'grpc'}://${endpoint.target}`;
    const pinned = new GrpcTransport({ ...this.options, url, enableGpuIpc: false });
    return new Sequence(model, pinned, () => pinned.close(), { id });
  }

  // ── repository, statistics, settings ─────────────────────────────────────────────────────

  repositoryIndex(options: RepositoryIndexOptions = {}): Promise<RepositoryModel[]> {
    return this.#withWire(options, (wire, grpc, callOptions) => wire.repositoryIndex(grpc, callOptions));
  }

  loadModel(model: string, options: LoadModelOptions = {}): Promise<void> {
    return this.#withWire(options, (wire, grpc, callOptions) => wire.loadModel(grpc, model, callOptions));
  }

  unloadModel(model: string, options: UnloadModelOptions = {}): Promise<void> {
    return this.#withWire(options, (wire, grpc, callOptions) => wire.unloadModel(grpc, model, callOptions));
  }

  /** Statistics of one model (and version), or of every model when `model` is omitted. */
  async modelStatistics(model = '', options: ModelOptions = {}): Promise<ModelStatistics[]> {
    const { create, service, callOptions } = await this.#serviceWire(options);
    const request = create(service.modelStatistics.input, { name: model, version: options.version ?? '' });
    const response = await withExtension(Extension.Statistics, 'modelStatistics()', this.grpc.address, () =>
      this.grpc.unary(service.modelStatistics, request, callOptions, model ? { model } : {}),
    );
    return response.modelStats.map(toModelStatistics);
  }

  traceSettings(options: TraceSettingsOptions = {}): Promise<TraceSettings> {
    return this.#withWire(options, (wire, grpc, callOptions) => wire.getTraceSettings(grpc, callOptions));
  }

  updateTraceSettings(
    settings: TraceSettingsUpdate,
    options: TraceSettingsOptions = {},
  ): Promise<TraceSettings> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.updateTraceSettings(grpc, settings, callOptions),
    );
  }

  logSettings(options: CallOptions = {}): Promise<LogSettings> {
    return this.#withWire(options, (wire, grpc, callOptions) => wire.getLogSettings(grpc, callOptions));
  }

  updateLogSettings(settings: LogSettings, options: CallOptions = {}): Promise<LogSettings> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.updateLogSettings(grpc, settings, callOptions),
    );
  }

  // ── shared memory ────────────────────────────────────────────────────────────────────────

  registerSystemSharedMemory(region: RegisterSystemRegion, options: CallOptions = {}): Promise<void> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.registerSystemSharedMemory(grpc, region, callOptions),
    );
  }

  systemSharedMemoryStatus(name = '', options: CallOptions = {}): Promise<SystemRegionStatus[]> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.systemSharedMemoryStatus(grpc, name, callOptions),
    );
  }

  /** Unregisters one system region, or all of them when `name` is empty. */
  unregisterSystemSharedMemory(name = '', options: CallOptions = {}): Promise<void> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.unregisterSharedMemory(grpc, 'system', name, callOptions),
    );
  }

  registerCudaSharedMemory(region: RegisterCudaRegion, options: CallOptions = {}): Promise<void> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.registerCudaSharedMemory(grpc, region, callOptions),
    );
  }

  cudaSharedMemoryStatus(name = '', options: CallOptions = {}): Promise<CudaRegionStatus[]> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.cudaSharedMemoryStatus(grpc, name, callOptions),
    );
  }

  unregisterCudaSharedMemory(name = '', options: CallOptions = {}): Promise<void> {
    return this.#withWire(options, (wire, grpc, callOptions) =>
      wire.unregisterSharedMemory(grpc, 'cuda', name, callOptions),
    );
  }

  /**
   * Cancels open stream sessions, releases shared-memory regions and closes the client's own
   * channel. A `transport` the client was handed is not closed: whoever created it closes it
   * (nothing closes what it was handed). Idempotent.
   */
  async close(): Promise<void> {
    for (const session of this.#sessions) session.cancel();
    this.#sessions.clear();
    await this.#grpc?.close();
  }
}

function hash(text: string): number {
  let value = 2166136261;
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 16777619);
  return value >>> 0;
}

export function createTritonClient(options: ClientOptions & { transport?: InferTransport }): TritonClient {
  return new TritonClient(options);
}
