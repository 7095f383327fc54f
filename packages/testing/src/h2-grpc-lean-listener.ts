import * as net from 'node:net';
import * as tls from 'node:tls';
import {
  type GrpcListener,
  type GrpcListenerOptions,
  listenOn,
  type StopOutcome,
  settleStop,
} from './grpc-listener.js';
import type { H2ServeContext } from './h2-grpc-call.js';
import { LeanSession } from './h2-grpc-lean-session.js';
import { MAX_CONCURRENT_STREAMS, SESSION_WINDOW, STREAM_WINDOW } from './h2-grpc-listener.js';
import { unaryRoutes } from './rpc-routes.js';

const pem = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value) : value);

/** Our SETTINGS_MAX_FRAME_SIZE: core's frame reader's bound (1 MiB). */
const MAX_FRAME_SIZE = 1 << 20;

/**
 * The reference server's gRPC port on a plain (or TLS) socket with core's HTTP/2 frame code (the
 * `lean` transport): no node:http2 session or stream objects, and a unary answer's HEADERS, DATA and
 * trailers in one write (node:http2 writes the trailers a turn later, in a write of their own).
 * The same handlers, limits and stop/kill behaviour as the `http2` transport.
 */
export class LeanGrpcListener implements GrpcListener {
  readonly #context: H2ServeContext;
  readonly #options: GrpcListenerOptions;
  #server: net.Server | undefined;
  readonly #sockets = new Set<net.Socket>();
  readonly #sessions = new Set<LeanSession>();
  #closed: Promise<void> = Promise.resolve();

  constructor(options: GrpcListenerOptions) {
    this.#options = options;
    this.#context = { state: options.state, routes: unaryRoutes(options.handlers) };
  }

  async listen(host: string, port: number): Promise<number> {
    const limits = {
      maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
      streamWindow: STREAM_WINDOW,
      sessionWindow: SESSION_WINDOW,
      maxFrameSize: MAX_FRAME_SIZE,
    };
    const serve = (socket: net.Socket) => {
      const session = new LeanSession(socket, this.#context, limits);
      this.#sessions.add(session);
      session.onClose = () => this.#sessions.delete(session);
    };
    const secure = this.#options.tls;
    let server: net.Server;
    if (secure === undefined) {
      server = net.createServer({ noDelay: true }, serve);
    } else {
      server = tls.createServer(
        {
          key: pem(secure.key),
          cert: pem(secure.cert),
          ...(secure.ca === undefined ? {} : { ca: pem(secure.ca) }),
          requestCert: secure.requireClientCert === true,
          rejectUnauthorized: secure.requireClientCert === true,
          ALPNProtocols: ['h2'],
        },
        (socket: tls.TLSSocket) => {
          if (socket.alpnProtocol !== 'h2') {
            socket.destroy();
            return;
          }
          serve(socket);
        },
      );
      server.on('tlsClientError', () => {});
    }
    server.on('connection', (socket: net.Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    const bound = await listenOn(server, host, port);
    this.#server = server;
    this.#closed = new Promise((resolve) => server.once('close', () => resolve()));
    return bound;
  }

  stop(graceMs: number): Promise<StopOutcome> {
    const server = this.#server;
    if (server === undefined) return Promise.resolve('graceful');
    this.#server = undefined;
    server.close();
    // GOAWAY: no new streams; each connection closes once its streams are done.
    for (const session of this.#sessions) session.goAway();
    return settleStop(this.#closed, graceMs, () => this.#destroySockets());
  }

  kill(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return this.#closed;
    this.#server = undefined;
    server.close();
    this.#destroySockets();
    return this.#closed;
  }

  /** Closes the TCP connections: clients see a dead peer (UNAVAILABLE). */
  #destroySockets(): void {
    for (const socket of this.#sockets) socket.destroy();
    for (const session of this.#sessions) session.destroy();
  }
}
