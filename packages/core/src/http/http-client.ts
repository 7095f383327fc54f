import type { ModelMetadata, ModelOptions, ServerMetadata } from '../client.js';
import { ErrorCode, InfergateError } from '../errors.js';
import type { InferOptions } from '../infer-request.js';
import { inferStreamThrough, inferThrough } from '../internal/infer-calls.js';
import { ServerExtensions } from '../internal/server-extensions.js';
import { parseOptions } from '../parse-options.js';
import type {
  LoadModelOptions,
  RepositoryIndexOptions,
  RepositoryModel,
  UnloadModelOptions,
} from '../repository.js';
import type { InferResult } from '../result.js';
import type { LogSettings, TraceSettings, TraceSettingsOptions, TraceSettingsUpdate } from '../settings.js';
import type {
  CudaRegionStatus,
  RegisterCudaRegion,
  RegisterSystemRegion,
  SystemRegionStatus,
} from '../shared-memory-rpc.js';
import type { ModelStatistics } from '../statistics.js';
import type { InputTensor } from '../tensor.js';
import { applyInterceptors, type CallOptions, type InferTransport } from '../transport.js';
import { type GenerateRequest, type GenerateResponse, generate, generateStream } from './http-generate.js';
import * as management from './http-management.js';
import { type HttpClientSchemaOptions, httpClientOptionsSchema } from './http-options.js';
import * as sharedMemory from './http-shared-memory.js';
import { HttpTransport } from './http-transport.js';

/** Options of `createHttpClient`: the transport's, interceptors, and where inference goes. */
export interface HttpClientOptions extends HttpClientSchemaOptions {
  /** Inference goes here instead (a batcher or router over HTTP transports). @default this endpoint's HttpTransport */
  transport?: InferTransport;
}

/**
 * The Triton client over HTTP/REST, for runtimes without HTTP/2 (Workers, Deno Deploy, edge
 * functions) or networks that only pass HTTP/1.1. The same calls and results as `TritonClient`:
 * inference goes through the interceptors to `transport`; management calls go to the endpoint.
 */
export class HttpClient {
  /** The endpoint's transport (management calls, generate). */
  readonly http: HttpTransport;
  /** Where inference goes: `http`, or the transport given in the options. */
  readonly transport: InferTransport;
  readonly #extensions = new ServerExtensions((options) => this.serverMetadata(options));

  constructor(options: HttpClientOptions) {
    const { transport, ...rest } = options ?? ({} as HttpClientOptions);
    const { interceptors, ...resolved } = parseOptions(httpClientOptionsSchema, rest, 'HTTP client options');
    this.http = new HttpTransport(resolved);
    this.transport = applyInterceptors(transport ?? this.http, interceptors);
  }

  serverLive(options: CallOptions = {}): Promise<boolean> {
    return management.serverLive(this.http, options);
  }

  serverReady(options: CallOptions = {}): Promise<boolean> {
    return management.serverReady(this.http, options);
  }

  modelReady(model: string, options: ModelOptions = {}): Promise<boolean> {
    return management.modelReady(this.http, model, options);
  }

  serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return management.serverMetadata(this.http, options);
  }

  /** The server's protocol extensions, fetched once and cached. */
  extensions(options: { refresh?: boolean } & CallOptions = {}): Promise<ReadonlySet<string>> {
    return this.#extensions.get(options);
  }

  /** True when the server advertises the extension (see `Extension`). */
  async supports(extension: string): Promise<boolean> {
    return (await this.extensions()).has(extension);
  }

  modelMetadata(model: string, options: ModelOptions = {}): Promise<ModelMetadata> {
    return management.modelMetadata(this.http, model, options);
  }

  /** The model's configuration in Triton's JSON form (snake_case), as tritonclient.http returns it. */
  modelConfig(model: string, options: ModelOptions = {}): Promise<Record<string, unknown>> {
    return management.modelConfig(this.http, model, options);
  }

  /** Runs one inference; inputs are validated and encoded before anything is sent. */
  infer(model: string, inputs: readonly InputTensor[], options: InferOptions = {}): Promise<InferResult> {
    return inferThrough(this.transport, model, inputs, options);
  }

  /** The transport's stream: over HTTP one response per request (decoupled models: `generateStream`). */
  inferStream(
    model: string,
    inputs: readonly InputTensor[],
    options: InferOptions = {},
  ): AsyncIterable<InferResult> {
    return inferStreamThrough(this.transport, model, inputs, options);
  }

  /** Triton's generate extension: JSON in, one JSON response out. */
  generate(model: string, request: GenerateRequest, options: ModelOptions = {}): Promise<GenerateResponse> {
    return generate(this.http, model, request, options);
  }

  /** Triton's generate_stream extension (server-sent events): one response per event. */
  generateStream(
    model: string,
    request: GenerateRequest,
    options: ModelOptions = {},
  ): AsyncIterable<GenerateResponse> {
    return generateStream(this.http, model, request, options);
  }

  repositoryIndex(options: RepositoryIndexOptions = {}): Promise<RepositoryModel[]> {
    return management.repositoryIndex(this.http, options);
  }

  loadModel(model: string, options: LoadModelOptions = {}): Promise<void> {
    return management.loadModel(this.http, model, options);
  }

  unloadModel(model: string, options: UnloadModelOptions = {}): Promise<void> {
    return management.unloadModel(this.http, model, options);
  }

  /** Statistics of one model (and version), or of every model when `model` is omitted. */
  modelStatistics(model = '', options: ModelOptions = {}): Promise<ModelStatistics[]> {
    return management.modelStatistics(this.http, model, options);
  }

  traceSettings(options: TraceSettingsOptions = {}): Promise<TraceSettings> {
    return management.traceSettings(this.http, undefined, options);
  }

  updateTraceSettings(
    settings: TraceSettingsUpdate,
    options: TraceSettingsOptions = {},
  ): Promise<TraceSettings> {
    if (typeof settings !== 'object' || settings === null) {
      throw new InfergateError(ErrorCode.InvalidArgument, 'trace settings must be an object');
    }
    return management.traceSettings(this.http, settings, options);
  }

  logSettings(options: CallOptions = {}): Promise<LogSettings> {
    return management.logSettings(this.http, undefined, options);
  }

  updateLogSettings(settings: LogSettings, options: CallOptions = {}): Promise<LogSettings> {
    return management.logSettings(this.http, settings, options);
  }

  registerSystemSharedMemory(region: RegisterSystemRegion, options: CallOptions = {}): Promise<void> {
    return sharedMemory.registerSystemSharedMemory(this.http, region, options);
  }

  systemSharedMemoryStatus(name = '', options: CallOptions = {}): Promise<SystemRegionStatus[]> {
    return sharedMemory.systemSharedMemoryStatus(this.http, name, options);
  }

  /** Unregisters one system region, or all of them when `name` is empty. */
  unregisterSystemSharedMemory(name = '', options: CallOptions = {}): Promise<void> {
    return sharedMemory.unregisterSharedMemory(this.http, 'system', name, options);
  }

  registerCudaSharedMemory(region: RegisterCudaRegion, options: CallOptions = {}): Promise<void> {
    return sharedMemory.registerCudaSharedMemory(this.http, region, options);
  }

  cudaSharedMemoryStatus(name = '', options: CallOptions = {}): Promise<CudaRegionStatus[]> {
    return sharedMemory.cudaSharedMemoryStatus(this.http, name, options);
  }

  unregisterCudaSharedMemory(name = '', options: CallOptions = {}): Promise<void> {
    return sharedMemory.unregisterSharedMemory(this.http, 'cuda', name, options);
  }

  /**
   * Ends the calls in flight on the client's own endpoint. A `transport` the client was handed is
   * not closed: whoever created it closes it (nothing closes what it was handed). Idempotent.
   */
  async close(): Promise<void> {
    this.http.close();
  }
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  return new HttpClient(options);
}
