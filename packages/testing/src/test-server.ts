import type { Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES } from '@infergate/core';
import type { RecordedCall } from './call-recorder.js';
import type { FaultInjector } from './fault-injector.js';
import { createGrpcService, type GrpcService } from './grpc-service.js';
import { trackSockets } from './internal/socket-tracker.js';
import type { ModelDefinition } from './model-definition.js';
import type { ModelStats } from './model-stats.js';
import { builtinModels } from './models/builtin-models.js';
import { RpcError } from './rpc-error.js';
import { ServerState } from './server-state.js';
import { createHandlers } from './service-handlers.js';
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
  /** Extensions ServerMetadata lists. @default ['model_configuration', 'parameters'] */
  extensions?: readonly string[];
  /** How long `stop()` lets calls in progress finish before it forces the shutdown, in ms. @default 2000 */
  stopGraceMs?: number;
}

const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
};

function bind(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => {
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
  #port: number;
  #server: grpc.Server | undefined;
  #sockets: Set<Socket> = new Set();
  #stopping: Promise<void> | undefined;

  /** Use `startTestServer()`; the constructor does not listen. */
  constructor(options: TestServerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.#graceMs = options.stopGraceMs ?? 2000;
    const { maxBatchSize = 64, ...costs } = options.simulatedGpu ?? {};
    this.gpu = new SimulatedGpu(costs);
    this.#state = new ServerState({
      name: options.serverName ?? 'infergate-testing',
      version: options.serverVersion ?? VERSION,
      extensions: options.extensions ?? ['model_configuration', 'parameters'],
    });
    this.faults = this.#state.faults;
    const models = [
      ...(options.builtins === false ? [] : builtinModels(this.gpu, maxBatchSize)),
      ...(options.models ?? []),
    ];
    for (const model of models) this.#state.models.add(model);
    this.#service = createGrpcService(this.#state, createHandlers(this.#state));
  }

  /** The port the server listens on (the chosen one once started with port 0). */
  get port(): number {
    return this.#port;
  }

  /** `host:port`, as `createTritonClient({ url })` takes it. */
  get url(): string {
    return `${this.host}:${this.#port}`;
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
      this.#port = await bind(server, this.host, this.#port);
    } catch (error) {
      server.forceShutdown();
      throw error;
    }
    this.#server = server;
    this.#sockets = trackSockets(server);
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

  /** Clears recorded calls, counters and faults. */
  reset(): void {
    this.#state.calls.clear();
    this.#state.stats.reset();
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
    const sockets = this.#sockets;
    this.#stopping = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#drop(server, sockets, 'the server stopped');
        resolve();
      }, this.#graceMs);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.#stopping;
  }

  /** Drops every connection and call at once, as a crash would. `restart()` serves again. */
  kill(): void {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
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
