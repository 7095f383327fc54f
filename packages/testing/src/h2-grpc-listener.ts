import type * as Http2 from 'node:http2';
import { createRequire } from 'node:module';
import { type GrpcListenerOptions, SocketGrpcListener, serverTlsOptions } from './grpc-listener.js';
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

/**
 * The reference server's gRPC port on `node:http2` directly (the `http2` transport): one 'stream'
 * listener dispatches each call (h2-grpc-call.ts). It keeps every session and raw socket so that
 * `stop()` can send GOAWAY to each and `kill()` can destroy them all at once, as a crash would.
 */
export class H2GrpcListener extends SocketGrpcListener<Http2.ServerHttp2Session> {
  readonly #context: H2ServeContext;
  readonly #options: GrpcListenerOptions;

  constructor(options: GrpcListenerOptions) {
    super();
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
            ...serverTlsOptions(tls),
            allowHTTP1: false,
          });
    server.on('session', (session: Http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('error', () => {});
      session.once('close', () => this.sessions.delete(session));
      session.once('connect', () => {
        if (!session.destroyed) session.setLocalWindowSize(SESSION_WINDOW);
      });
    });
    server.on('sessionError', () => {});
    server.on('stream', (stream: Http2.ServerHttp2Stream, headers: Http2.IncomingHttpHeaders) =>
      serveH2Stream(this.#context, stream, headers),
    );
    return this.bind(server, host, port);
  }

  protected goAway(session: Http2.ServerHttp2Session): void {
    session.close();
  }
}
