import * as net from 'node:net';
import * as tls from 'node:tls';
import { type GrpcListenerOptions, SocketGrpcListener, serverTlsOptions } from './grpc-listener.js';
import type { H2ServeContext } from './h2-grpc-call.js';
import { LeanSession } from './h2-grpc-lean-session.js';
import { MAX_CONCURRENT_STREAMS, SESSION_WINDOW, STREAM_WINDOW } from './h2-grpc-listener.js';
import { RequestMemoryPool } from './request-memory-pool.js';
import { withReusedReadBuffer } from './reused-read-socket.js';
import { unaryRoutes } from './rpc-routes.js';

/** Our SETTINGS_MAX_FRAME_SIZE: core's frame reader's bound (1 MiB). */
const MAX_FRAME_SIZE = 1 << 20;

/**
 * The reference server's gRPC port on a plain (or TLS) socket with core's HTTP/2 frame code (the
 * `lean` transport): no node:http2 session or stream objects, and a unary answer's HEADERS, DATA and
 * trailers in one write (node:http2 writes the trailers a turn later, in a write of their own).
 * The same handlers, limits and stop/kill behaviour as the `http2` transport.
 */
export class LeanGrpcListener extends SocketGrpcListener<LeanSession> {
  readonly #context: H2ServeContext;
  readonly #options: GrpcListenerOptions;

  constructor(options: GrpcListenerOptions) {
    super();
    this.#options = options;
    this.#context = {
      state: options.state,
      routes: unaryRoutes(options.handlers),
      requestMemory: new RequestMemoryPool(),
    };
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
      this.sessions.add(session);
      session.onClose = () => this.sessions.delete(session);
    };
    const secure = this.#options.tls;
    if (secure === undefined) {
      // Accepted paused: each connection moves into a socket that reads into one reused buffer.
      const server = net.createServer({ noDelay: true, pauseOnConnect: true });
      const adopt = (accepted: net.Socket) => {
        const socket = withReusedReadBuffer(accepted, server);
        serve(socket);
        return socket;
      };
      return this.bind(server, host, port, adopt);
    }
    const server = tls.createServer(serverTlsOptions(secure), (socket: tls.TLSSocket) => {
      if (socket.alpnProtocol !== 'h2') {
        socket.destroy();
        return;
      }
      serve(socket);
    });
    server.on('tlsClientError', () => {});
    return this.bind(server, host, port);
  }

  /** Memory for large ModelInfer requests, recycled across this listener's connections. */
  get requestMemory(): RequestMemoryPool {
    return this.#context.requestMemory as RequestMemoryPool;
  }

  protected goAway(session: LeanSession): void {
    session.goAway();
  }
}
