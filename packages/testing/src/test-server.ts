import type { Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES } from '@infergate/core';
import type { RecordedCall } from './call-recorder.js';
import type { FaultInjector } from './fault-injector.js';
import { createGrpcService, type GrpcService } from './grpc-service.js';
import { HttpListener } from './http-listener.js';
import type { VersionStats } from './inference-stats.js';
import { exposeRequestEncoding } from './internal/request-encoding.js';
import { trackSockets } from './internal/socket-tracker.js';
import type { ModelDefinition } from './model-definition.js';
import type { ModelStats } from './model-stats.js';
import { builtinModels } from './models/builtin-models.js';
import { type Restriction, TRITON_EXTENSIONS } from './restriction.js';
import { RpcError } from './rpc-error.js';
import type { ServerLogSettings, ServerTraceSettings } from './runtime-settings.js';
import { credentials, type RepositoryView, type TestServerTls } from './server-options.js';
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
   * Also serve KServe v2 HTTP/REST (binary tensor data, generate, generate_stream) on a second
   * port of `host` (`httpUrl`), over the same models and state. `port` 0 picks a free one. @default false
   */
  http?: boolean | { port?: number };
}

const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  // Channelz's per-call trackers (closures, counters, Date.now() per message) serve a channelz
  // service that this server does not offer; off, each RPC costs the server less CPU.
  'grpc.enable_channelz': 0,
};

function bind(
  server: grpc.Server,
  host: string,
  port: number,
  creds: grpc.ServerCredentials,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, creds, (error, bound) => {
      if (error) reject(error);
      else resolve(bound);
    });
  });
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
  readonly #state: ServerState;
  readonly #service: GrpcService;
  readonly #graceMs: number;
  readonly #tls: TestServerTls | undefined;
  #port: number;
  #server: grpc.Server | undefined;
  #sockets: Set<Socket> = new Set();
  #stopping: Promise<void> | undefined;
  readonly #http: HttpListener | undefined;

  /** Use `startTestServer()`; the constructor does not listen. */
  constructor(options: TestServerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.#graceMs = options.stopGraceMs ?? 2000;
    this.#tls = options.tls;
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
    const handlers = createHandlers(this.#state);
    this.#service = createGrpcService(this.#state, handlers);
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
    return this.#server !== undefined;
  }

  /** The last 1000 RPCs received, oldest first. */
  get calls(): RecordedCall[] {
    return this.#state.calls.list();
  }

  /** Starts listening (again, on the same port after a `kill()` or `stop()`). */
  async listen(): Promise<void> {
    if (this.#server !== undefined) return;
    const server = new grpc.Server(SERVER_OPTIONS);
    server.addService(this.#service.definition, this.#service.implementation);
    try {
      this.#port = await bind(server, this.host, this.#port, credentials(this.#tls));
    } catch (error) {
      server.forceShutdown();
      throw error;
    }
    await this.#http?.listen();
    this.#server = server;
    this.#sockets = trackSockets(server);
    exposeRequestEncoding(server);
    this.#stopping = undefined;
  }

  /** Serves `definition`, replacing any model of the same name. */
  addModel(definition: ModelDefinition): void {
    this.#state.models.add(definition);
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
    const server = this.#server;
    if (server === undefined) return this.#stopping ?? Promise.resolve();
    this.#server = undefined;
    // A Triton that stops forgets its shared memory registrations.
    this.#state.shm.unregister();
    const sockets = this.#sockets;
    const http = this.#http?.stop(this.#graceMs);
    this.#stopping = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#drop(server, sockets, 'the server stopped');
        resolve();
      }, this.#graceMs);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    }).then(() => http);
    return this.#stopping;
  }

  /** Drops every connection and call at once, as a crash would. `restart()` serves again. */
  kill(): void {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    this.#state.shm.unregister();
    this.#http?.kill();
    this.#drop(server, this.#sockets, 'the server was killed');
  }

  #drop(server: grpc.Server, sockets: ReadonlySet<Socket>, reason: string): void {
    // Close the TCP connections first, so that clients see a dead peer (UNAVAILABLE), not CANCELLED.
    for (const socket of sockets) socket.destroy();
    server.forceShutdown();
    this.#state.abortAll(new RpcError(grpc.status.UNAVAILABLE, reason));
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
