import type * as Http2 from 'node:http2';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import {
  type GrpcListener,
  type GrpcListenerOptions,
  listenOn,
  type StopOutcome,
  settleStop,
} from './grpc-listener.js';
import { type H2ServeContext, serveH2Stream } from './h2-grpc-call.js';
import { unaryRoutes } from './rpc-routes.js';

// The CommonJS module object, whose createServer a caller may wrap (the chaos fixture's arrival clock
// does); an ESM namespace import would keep the original.
const http2 = createRequire(import.meta.url)('node:http2') as typeof Http2;

/** Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
export const MAX_CONCURRENT_STREAMS = 1024;
/**
 * Per-stream receive window: a request with a 1 MiB tensor (1 MiB and its head) arrives without
 * waiting for a WINDOW_UPDATE. At exactly 1 MiB, the last bytes of each such request (its head's
 * worth) waited for one: a round trip, a frame more each way and a wake-up of both processes.
 */
export const STREAM_WINDOW = 4 << 20;
/** Connection receive window: 16 streams' whole windows. */
export const SESSION_WINDOW = 64 << 20;

const pem = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value) : value);

/**
 * The reference server's gRPC port on `node:http2` directly (the `http2` transport): one 'stream'
 * listener dispatches each call (h2-grpc-call.ts). It keeps every session and raw socket so that
 * `stop()` can send GOAWAY to each and `kill()` can destroy them all at once, as a crash would.
 */
export class H2GrpcListener implements GrpcListener {
  readonly #context: H2ServeContext;
  readonly #options: GrpcListenerOptions;
  #server: Http2.Http2Server | Http2.Http2SecureServer | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<Http2.ServerHttp2Session>();
  #closed: Promise<void> = Promise.resolve();

  constructor(options: GrpcListenerOptions) {
    this.#options = options;
    this.#context = { state: options.state, routes: unaryRoutes(options.handlers) };
  }

  async listen(host: string, port: number): Promise<number> {
    const settings = { maxConcurrentStreams: MAX_CONCURRENT_STREAMS, initialWindowSize: STREAM_WINDOW };
    // Each stream buffers at most one partial message (MAX_MESSAGE_BYTES), so the session-wide
    // limit is lifted, as grpc-js does: Node's 10 MB default refuses large tensors.
    const common = { settings, maxSessionMemory: Number.MAX_SAFE_INTEGER };
    const tls = this.#options.tls;
    const server =
      tls === undefined
        ? http2.createServer(common)
        : http2.createSecureServer({
            ...common,
            key: pem(tls.key),
            cert: pem(tls.cert),
            ...(tls.ca === undefined ? {} : { ca: pem(tls.ca) }),
            requestCert: tls.requireClientCert === true,
            rejectUnauthorized: tls.requireClientCert === true,
            ALPNProtocols: ['h2'],
            allowHTTP1: false,
          });
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    server.on('session', (session: Http2.ServerHttp2Session) => {
      this.#sessions.add(session);
      session.on('error', () => {});
      session.once('close', () => this.#sessions.delete(session));
      session.once('connect', () => {
        if (!session.destroyed) session.setLocalWindowSize(SESSION_WINDOW);
      });
    });
    server.on('sessionError', () => {});
    server.on('stream', (stream: Http2.ServerHttp2Stream, headers: Http2.IncomingHttpHeaders) =>
      serveH2Stream(this.#context, stream, headers),
    );
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
    // GOAWAY: no new streams; each session closes once its streams are done.
    for (const session of this.#sessions) session.close();
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

  /** Closes the TCP connections under the sessions: clients see a dead peer (UNAVAILABLE). */
  #destroySockets(): void {
    for (const socket of this.#sockets) socket.destroy();
    for (const session of this.#sessions) session.destroy();
  }
}
