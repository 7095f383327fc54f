import type { RecordedCall } from './call-recorder.js';
import type { FaultInjector } from './fault-injector.js';
import type { GrpcListener, GrpcTransportKind } from './grpc-listener.js';
import { LeanGrpcListener } from './h2-grpc-lean-listener.js';
import { H2GrpcListener } from './h2-grpc-listener.js';
import type { HandlerTable } from './handler-table.js';
import { HttpListener } from './http-listener.js';
import type { VersionStats } from './inference-stats.js';
import { status } from './internal/grpc-status.js';
import { type ModelDefinition, resolveModel } from './model-definition.js';
import type { ModelStats } from './model-stats.js';
import { warmUpModel } from './model-warmup.js';
import { builtinModels } from './models/builtin-models.js';
import { type Restriction, TRITON_EXTENSIONS } from './restriction.js';
import { RpcError } from './rpc-error.js';
import type { ServerLogSettings, ServerTraceSettings } from './runtime-settings.js';
import type { RepositoryView, TestServerTls } from './server-options.js';
import { ServerState } from './server-state.js';
import { createHandlers } from './service-handlers.js';
import type { SharedMemoryRegion } from './shared-memory.js';
import { SimulatedGpu, type SimulatedGpuOptions } from './simulated-gpu.js';
import { VERSION } from './version.js';

export interface TestServerOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Models to serve besides (or, with `builtins: false`, instead of) the built-in ones. */
  models?: readonly ModelDefinition[];
  /** Serve `identity`, `add_sub`, `simulated_gpu` and `fail`. @default true */
  builtins?: boolean;
  /** Costs of the `simulated_gpu` model. @default { baseMs: 2, perRowMs: 0.05, maxBatchSize: 64 } */
  simulatedGpu?: SimulatedGpuOptions & { maxBatchSize?: number };
  /** @default 'infergate-testing' */
  serverName?: string;
  /** @default this package's version */
  serverVersion?: string;
  /**
   * Extensions ServerMetadata lists. The RPCs of an extension left out answer UNIMPLEMENTED
   * (model_configuration, statistics, model_repository, system_shared_memory, cuda_shared_memory,
   * trace, logging). @default Triton 2.51's full list (`TRITON_EXTENSIONS`)
   */
  extensions?: readonly string[];
  /**
   * Triton's `--grpc-restricted-protocol=<groups>:<header>=<value>`: calls in those groups without
   * the metadata `triton-grpc-protocol-<header>: <value>` answer UNAVAILABLE, as Triton does.
   */
  restricted?: Restriction | readonly Restriction[];
  /** Serve TLS (`grpcs`); with `requireClientCert`, mutual TLS against `ca`. @default plaintext */
  tls?: TestServerTls;
  /** How long `stop()` lets calls in progress finish before it forces the shutdown, in ms. @default 2000 */
  stopGraceMs?: number;
  /**
   * How long one run of a model's `model_warmup` sample may take, in ms. A run still going then is
   * aborted (its `context.signal`) and the warm-up rejects with DEADLINE_EXCEEDED, so a model that
   * never answers cannot hold `listen()` or `addModel()` forever. @default 30000
   */
  warmupTimeoutMs?: number;
  /**
   * Also serve KServe v2 HTTP/REST (binary tensor data, generate, generate_stream) on a second
   * port of `host` (`httpUrl`), over the same models and state. `port` 0 picks a free one. @default false
   */
  http?: boolean | { port?: number };
  /**
   * What serves the gRPC port: `'lean'`, this package's gRPC server on a plain (or TLS) socket with
   * `@infergate/core`'s HTTP/2 frame code (a unary answer's HEADERS, DATA and trailers in one write);
   * `'http2'`, the same server on `node:http2`; or `'grpc-js'`, the `@grpc/grpc-js` server used
   * before (loaded only when chosen; kept for one release). None but `'grpc-js'` loads grpc-js. All
   * serve the same RPCs, statuses and lifecycle. @default 'lean'
   */
  transport?: GrpcTransportKind;
}

/**
 * A Triton-compatible gRPC server on a real port, in this process. Counters, recorded calls and
 * faults live as long as the object, across `kill()` and `restart()`.
 */
export class TestServer {
  readonly host: string;
  /** Server-level fault injection for ModelInfer (see `FaultInjector`). */
  readonly faults: FaultInjector;
  /** The execution slot behind the `simulated_gpu` model. */
  readonly gpu: SimulatedGpu;
  /** What serves the gRPC port (`TestServerOptions.transport`). */
  readonly transport: GrpcTransportKind;
  readonly #state: ServerState;
  readonly #handlers: HandlerTable;
  readonly #graceMs: number;
  readonly #warmupTimeoutMs: number;
  readonly #tls: TestServerTls | undefined;
  #port: number;
  #listener: GrpcListener | undefined;
  #stopping: Promise<void> | undefined;
  /** The models given at construction that have `model_warmup` samples, warmed up by the first `listen()`. */
  readonly #toWarm: readonly ModelDefinition[];
  #warmedUp: Promise<void> | undefined;
  readonly #http: HttpListener | undefined;

  /** Use `startTestServer()`; the constructor does not listen. */
  constructor(options: TestServerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.#graceMs = options.stopGraceMs ?? 2000;
    this.#warmupTimeoutMs = options.warmupTimeoutMs ?? 30_000;
    if (!(this.#warmupTimeoutMs > 0) || !Number.isFinite(this.#warmupTimeoutMs)) {
      throw new TypeError(
        `warmupTimeoutMs must be a positive number of ms, got ${String(options.warmupTimeoutMs)}`,
      );
    }
    this.#tls = options.tls;
    this.transport = options.transport ?? 'lean';
    if (this.transport !== 'http2' && this.transport !== 'grpc-js' && this.transport !== 'lean') {
      throw new TypeError(`transport must be 'http2', 'lean' or 'grpc-js', got '${String(this.transport)}'`);
    }
    const { maxBatchSize = 64, ...costs } = options.simulatedGpu ?? {};
    this.gpu = new SimulatedGpu(costs);
    this.#state = new ServerState(
      {
        name: options.serverName ?? 'infergate-testing',
        version: options.serverVersion ?? VERSION,
        extensions: options.extensions ?? TRITON_EXTENSIONS,
      },
      options.restricted === undefined
        ? []
        : Array.isArray(options.restricted)
          ? (options.restricted as readonly Restriction[])
          : [options.restricted as Restriction],
    );
    this.faults = this.#state.faults;
    const models = [
      ...(options.builtins === false ? [] : builtinModels(this.gpu, maxBatchSize)),
      ...(options.models ?? []),
    ];
    for (const model of models) this.#state.models.add(model);
    this.#toWarm = models.filter((model) => (model.config?.modelWarmup?.length ?? 0) > 0);
    const handlers = createHandlers(this.#state);
    this.#handlers = handlers;
    if (options.http) {
      const httpPort = typeof options.http === 'object' ? (options.http.port ?? 0) : 0;
      this.#http = new HttpListener(this.#state, handlers, this.host, httpPort);
    }
  }

  /** The port the server listens on (the chosen one once started with port 0). */
  get port(): number {
    return this.#port;
  }

  /** `host:port`, as `createTritonClient({ url })` takes it (add `tls` options for a TLS server). */
  get url(): string {
    return `${this.host}:${this.#port}`;
  }

  /** `http://host:port` of the HTTP/REST port (`createHttpClient({ url })`); throws unless started with `http`. */
  get httpUrl(): string {
    if (this.#http === undefined) throw new Error('this test server was started without `http: true`');
    return `http://${this.host}:${this.#http.port}`;
  }

  /** The model repository (RepositoryIndex / Load / Unload) for tests. */
  get repository(): RepositoryView {
    const models = this.#state.models;
    return {
      index: (readyOnly = false) => models.index(readyOnly),
      isLoaded: (model) => models.isLoaded(model),
      load: (model, config) =>
        models.load(model, { time: Date.now(), files: {}, ...(config ? { config } : {}) }),
      unload: (model, unloadDependents = false) => models.unload(model, unloadDependents),
      loads: (model) => models.loads(model),
    };
  }

  /** Registered system shared memory regions. */
  sharedMemoryRegions(): SharedMemoryRegion[] {
    return this.#state.shm.status();
  }

  /** What ModelStatistics reports for one model version (the latest when none is given). */
  modelStatistics(model: string, version?: string): VersionStats {
    const resolved = version ?? this.#state.models.resolve(model).version;
    return this.#state.inference.of(model, resolved);
  }

  /** Responses the model produced (ModelStreamInfer counts each one a decoupled model sent). */
  responses(model: string): number {
    return this.#state.stats.snapshot(model).responses;
  }

  /** Sequences of a sequence-batching model that have started and not ended. */
  activeSequences(model: string): number {
    return this.#state.sequences.active(model);
  }

  /** Current global (or per-model) trace settings, and log settings. */
  traceSettings(model = ''): ServerTraceSettings {
    return this.#state.trace.get(model);
  }

  logSettings(): ServerLogSettings {
    return this.#state.log.get();
  }

  get listening(): boolean {
    return this.#listener !== undefined;
  }

  /** The last 1000 RPCs received, oldest first. */
  get calls(): RecordedCall[] {
    return this.#state.calls.list();
  }

  /** Starts listening (again, on the same port after a `kill()` or `stop()`). */
  async listen(): Promise<void> {
    if (this.#listener !== undefined) return;
    // After a kill, the old listener's port is free once its server has closed.
    await this.#stopping;
    if (this.#listener !== undefined) return;
    // As Triton, a model with `model_warmup` is warm before the server takes its first request.
    this.#warmedUp ??= this.#warmUpAll(this.#toWarm);
    await this.#warmedUp;
    if (this.#listener !== undefined) return;
    const options = { state: this.#state, handlers: this.#handlers, tls: this.#tls };
    const listener =
      this.transport === 'grpc-js'
        ? new (await import('./grpc-js-listener.js')).GrpcJsListener(options)
        : this.transport === 'lean'
          ? new LeanGrpcListener(options)
          : new H2GrpcListener(options);
    this.#port = await listener.listen(this.host, this.#port);
    try {
      await this.#http?.listen();
    } catch (error) {
      await listener.kill();
      throw error;
    }
    this.#listener = listener;
    this.#stopping = undefined;
  }

  /** Warms up each model in turn; a model whose warm-up fails is unloaded, and the first failure rejects. */
  async #warmUpAll(models: readonly ModelDefinition[]): Promise<void> {
    for (const definition of models) {
      try {
        await warmUpModel(this.#state, resolveModel(definition), this.#warmupTimeoutMs);
      } catch (error) {
        this.#state.models.unload(definition.name);
        throw error;
      }
    }
  }

  /**
   * Serves `definition`, replacing any model of the same name. A model without `model_warmup` is
   * served at once (the promise is already resolved). One with `model_warmup` samples in its
   * `config` runs them first and is served once they have all run (a model it replaces serves
   * until then); the promise rejects, and the model is not served, if one fails.
   */
  addModel(definition: ModelDefinition): Promise<void> {
    if ((definition.config?.modelWarmup?.length ?? 0) === 0) {
      this.#state.models.add(definition);
      return Promise.resolve();
    }
    return warmUpModel(this.#state, resolveModel(definition), this.#warmupTimeoutMs).then(() => {
      this.#state.models.add(definition);
    });
  }

  /** Stops serving a model; later requests get NOT_FOUND. Returns whether it was served. */
  removeModel(name: string): boolean {
    return this.#state.models.remove(name);
  }

  /** Names of the models served. */
  models(): string[] {
    return this.#state.models.names();
  }

  /** Counters for one model (requests, executions, rows, largest batch, cancellations, …). */
  stats(model: string): ModelStats {
    return this.#state.stats.snapshot(model);
  }

  /** How many times the model's `execute` ran. */
  executions(model: string): number {
    return this.#state.stats.snapshot(model).executions;
  }

  /** How many of the model's inference calls were cancelled (by the client or a deadline) mid-way. */
  cancellations(model: string): number {
    return this.#state.stats.snapshot(model).cancellations;
  }

  /** Clears recorded calls, counters, statistics, sequences, trace/log settings and faults. */
  reset(): void {
    this.#state.calls.clear();
    this.#state.stats.reset();
    this.#state.inference.reset();
    this.#state.sequences.reset();
    this.#state.trace.reset();
    this.#state.log.reset();
    this.#state.faults.reset();
    this.gpu.resetStats();
  }

  /** Holds every RPC that arrives from now on (an unresponsive server) until `resume()`. */
  pause(): void {
    this.#state.gate.close();
  }

  resume(): void {
    this.#state.gate.open();
  }

  /**
   * Stops accepting calls, lets those in progress finish for up to `stopGraceMs`, then forces
   * the rest closed. Idempotent; `listen()` or `restart()` serves again on the same port.
   */
  stop(): Promise<void> {
    const listener = this.#listener;
    if (listener === undefined) return this.#stopping ?? Promise.resolve();
    this.#listener = undefined;
    // A Triton that stops forgets its shared memory registrations.
    this.#state.shm.unregister();
    const http = this.#http?.stop(this.#graceMs);
    this.#stopping = listener.stop(this.#graceMs).then((outcome) => {
      if (outcome === 'forced') this.#state.abortAll(new RpcError(status.UNAVAILABLE, 'the server stopped'));
      return http;
    });
    return this.#stopping;
  }

  /** Drops every connection and call at once, as a crash would. `restart()` serves again. */
  kill(): void {
    const listener = this.#listener;
    if (listener === undefined) return;
    this.#listener = undefined;
    this.#state.shm.unregister();
    this.#http?.kill();
    this.#stopping = listener.kill();
    this.#state.abortAll(new RpcError(status.UNAVAILABLE, 'the server was killed'));
  }

  /** Kills the server if it is running, then listens again on the same port. */
  async restart(): Promise<void> {
    this.kill();
    await this.#stopping;
    await this.listen();
  }
}

/** Starts a test server and resolves once it listens. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const server = new TestServer(options);
  await server.listen();
  return server;
}
