import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES } from '@infergate/core';
import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import type { GrpcListener, GrpcListenerOptions, StopOutcome } from './grpc-listener.js';
import { createGrpcService, type GrpcService } from './grpc-service.js';
import { dropLongGrpcTimeouts } from './internal/long-grpc-timeout.js';
import { exposeRequestEncoding } from './internal/request-encoding.js';
import { trackSockets } from './internal/socket-tracker.js';
import type { TestServerTls } from './server-options.js';

// Required on first use, not imported: a bundler hoists a static import of an external package to
// the top of the bundle, which would load grpc-js in every process that imports this package.
const requireFromHere = createRequire(import.meta.url);
let loaded: typeof grpc | undefined;
const grpcJs = (): typeof grpc => {
  loaded ??= requireFromHere('@grpc/grpc-js') as typeof grpc;
  return loaded;
};

const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  // Channelz's per-call trackers (closures, counters, Date.now() per message) serve a channelz
  // service that this server does not offer; off, each RPC costs the server less CPU.
  'grpc.enable_channelz': 0,
};

function credentials(tls: TestServerTls | undefined): grpc.ServerCredentials {
  if (tls === undefined) return grpcJs().ServerCredentials.createInsecure();
  const pem = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value) : value);
  return grpcJs().ServerCredentials.createSsl(
    tls.ca === undefined ? null : pem(tls.ca),
    [{ private_key: pem(tls.key), cert_chain: pem(tls.cert) }],
    tls.requireClientCert === true,
  );
}

/**
 * The reference server's gRPC port on grpc-js (the `grpc-js` transport, kept selectable for one
 * release next to `http2`). This module is imported only when that transport is chosen.
 */
export class GrpcJsListener implements GrpcListener {
  readonly #service: GrpcService;
  readonly #tls: TestServerTls | undefined;
  #server: grpc.Server | undefined;
  #sockets: Set<Socket> = new Set();

  constructor(options: GrpcListenerOptions) {
    this.#service = createGrpcService(options.state, options.handlers);
    this.#tls = options.tls;
  }

  async listen(host: string, port: number): Promise<number> {
    const server = new (grpcJs().Server)(SERVER_OPTIONS);
    server.addService(this.#service.definition, this.#service.implementation);
    let bound: number;
    try {
      bound = await new Promise<number>((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, credentials(this.#tls), (error, value) => {
          if (error) reject(error);
          else resolve(value);
        });
      });
    } catch (error) {
      server.forceShutdown();
      throw error;
    }
    this.#server = server;
    this.#sockets = trackSockets(server);
    exposeRequestEncoding(server);
    dropLongGrpcTimeouts(server);
    return bound;
  }

  stop(graceMs: number): Promise<StopOutcome> {
    const server = this.#server;
    if (server === undefined) return Promise.resolve('graceful');
    this.#server = undefined;
    const sockets = this.#sockets;
    return new Promise<StopOutcome>((resolve) => {
      const timer = setLongTimeout(() => {
        this.#drop(server, sockets);
        resolve('forced');
      }, graceMs);
      server.tryShutdown(() => {
        clearLongTimer(timer);
        resolve('graceful');
      });
    });
  }

  kill(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return Promise.resolve();
    this.#server = undefined;
    this.#drop(server, this.#sockets);
    return Promise.resolve();
  }

  #drop(server: grpc.Server, sockets: ReadonlySet<Socket>): void {
    // Close the TCP connections first, so that clients see a dead peer (UNAVAILABLE), not CANCELLED.
    for (const socket of sockets) socket.destroy();
    server.forceShutdown();
  }
}
