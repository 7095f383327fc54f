import type { Server } from 'node:net';
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

/** Binds `server` to `host:port` (0: a free port) and resolves with the port; a bind error rejects. */
export function listenOn(server: Server, host: string, port: number): Promise<number> {
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
 * The end of a graceful stop, once the listener has stopped accepting and sent GOAWAY: `'graceful'`
 * when `closed` (every connection ended) settles within `graceMs`, else `force()` drops what is
 * left and the stop is `'forced'`.
 */
export function settleStop(closed: Promise<void>, graceMs: number, force: () => void): Promise<StopOutcome> {
  return new Promise<StopOutcome>((resolve) => {
    const timer = setTimeout(() => {
      force();
      resolve('forced');
    }, graceMs);
    void closed.then(() => {
      clearTimeout(timer);
      resolve('graceful');
    });
  });
}
