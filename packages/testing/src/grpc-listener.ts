import type { Server, Socket } from 'node:net';
import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import type { HandlerTable } from './handler-table.js';
import type { TestServerTls } from './server-options.js';
import type { ServerState } from './server-state.js';

/** Which implementation serves the reference server's gRPC port. */
export type GrpcTransportKind = 'http2' | 'lean' | 'grpc-js';

/** How a stop ended: every call finished within the grace, or the rest were dropped. */
export type StopOutcome = 'graceful' | 'forced';

/** One bound gRPC port; `TestServer` makes a new one for every `listen()`. */
export interface GrpcListener {
  /** Binds `host:port` (0: a free port) and resolves with the port. Cleans up if it fails. */
  listen(host: string, port: number): Promise<number>;
  /** Refuses new calls (GOAWAY), lets calls in progress finish for `graceMs`, then drops the rest. */
  stop(graceMs: number): Promise<StopOutcome>;
  /** Destroys every socket at once (clients see UNAVAILABLE); resolves once the port is free. */
  kill(): Promise<void>;
}

export interface GrpcListenerOptions {
  state: ServerState;
  handlers: HandlerTable;
  tls: TestServerTls | undefined;
}

const pem = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value) : value);

/**
 * The TLS options of the reference server's own HTTP/2 listeners: its key pair, the CA its clients'
 * certificates must chain to (and whether one is required), ALPN `h2` only.
 */
export function serverTlsOptions(tls: TestServerTls) {
  return {
    key: pem(tls.key),
    cert: pem(tls.cert),
    ...(tls.ca === undefined ? {} : { ca: pem(tls.ca) }),
    requestCert: tls.requireClientCert === true,
    rejectUnauthorized: tls.requireClientCert === true,
    ALPNProtocols: ['h2'],
  };
}

/** Binds `server` to `host:port` (0: a free port) and resolves with the port; a bind error rejects. */
function listenOn(server: Server, host: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.removeListener('error', onError);
      resolve((server.address() as { port: number }).port);
    });
  });
}

/**
 * A gRPC port on a Node socket server (node:http2's or a plain/TLS one) that keeps every raw socket
 * and HTTP/2 session, so that `stop()` can send GOAWAY on each and `kill()` can destroy them all at
 * once, as a crash would. Subclasses make the server, `bind` it, and track their sessions.
 */
export abstract class SocketGrpcListener<Session extends { destroy(): void }> implements GrpcListener {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  protected readonly sessions = new Set<Session>();
  #closed: Promise<void> = Promise.resolve();

  abstract listen(host: string, port: number): Promise<number>;

  /** GOAWAY on one session: no new streams; it closes once its streams are done. */
  protected abstract goAway(session: Session): void;

  /**
   * Tracks `server`'s sockets and binds it to `host:port`; resolves with the port. `adopt`, when
   * given, turns each accepted socket into the one the listener serves (and tracks) instead.
   */
  protected async bind(
    server: Server,
    host: string,
    port: number,
    adopt?: (accepted: Socket) => Socket,
  ): Promise<number> {
    server.on('connection', (accepted: Socket) => {
      const socket = adopt === undefined ? accepted : adopt(accepted);
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
    for (const session of this.sessions) this.goAway(session);
    return new Promise<StopOutcome>((resolve) => {
      const timer = setLongTimeout(() => {
        this.#destroySockets();
        resolve('forced');
      }, graceMs);
      void this.#closed.then(() => {
        clearLongTimer(timer);
        resolve('graceful');
      });
    });
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
    for (const session of this.sessions) session.destroy();
  }
}
