import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import type {
  ConnectivityChange,
  ConnectivityListener,
  ConnectivitySource,
  ConnectivityState,
} from '../connectivity.js';
import type { Endpoint } from '../options.js';
import { writeFrameHeader } from './grpc-frames.js';
import { type H2Call, type H2CallOptions, type H2Status, type Reroute, startH2Call } from './h2-call.js';
import { H2Connection, type H2ConnectionOptions } from './h2-connection.js';
import { MessagePool } from './message-pool.js';

/** A call that ended with a non-OK status; the transport maps it like a grpc-js ServiceError. */
export class H2StatusError extends Error {
  readonly code: number;
  readonly details: string;
  readonly metadata: H2Status['metadata'];

  constructor(status: H2Status) {
    super(`${status.code} ${status.details}`);
    this.name = 'H2StatusError';
    this.code = status.code;
    this.details = status.details;
    this.metadata = status.metadata;
  }
}

const compressors = { gzip: promisify(gzip), deflate: promisify(deflate) };

/**
 * The request compressed as `grpc-encoding` says (flag 1 in the prefix). The body arrives framed
 * uncompressed (its first 5 bytes a prefix), as the transport builds it.
 */
async function compress(
  body: readonly Uint8Array[],
  encoding: 'gzip' | 'deflate',
): Promise<readonly Uint8Array[]> {
  const packed = await compressors[encoding](Buffer.concat(body).subarray(5));
  const prefix = Buffer.allocUnsafe(5);
  writeFrameHeader(prefix, 0, packed.byteLength);
  prefix[0] = 1;
  return [prefix, packed];
}

/** Responses a server-streaming call holds before it stops reading (flow control does the rest). */
const STREAM_HIGH_WATER = 16;

export interface H2EngineOptions extends Omit<H2ConnectionOptions, 'endpoint' | 'onStateChange'> {
  compression: 'none' | 'gzip' | 'deflate';
  /** How calls spread over several endpoints, as the option of the same name says for grpc-js. */
  loadBalancing: 'round_robin' | 'pick_first';
}

/**
 * The lean gRPC client for inference: ModelInfer and ModelStreamInfer on our own HTTP/2 session
 * (`h2-session.ts`) over a net or tls socket, one connection per endpoint.
 *
 * Over several endpoints, `round_robin` spreads calls over every connection not in
 * `transient-failure` (an idle one is dialled by the call that picks it); `pick_first` sends every
 * call to the first endpoint, in the order given, whose connection is ready (else the first not
 * failing), so it stays on one endpoint until that one fails. Connections in `transient-failure`,
 * or redialling after a failed dial until they are ready, get calls only when every connection is
 * failing. A call whose connection fails to dial (the server cannot have seen it) moves to another
 * endpoint that can take it, within its deadline, instead of failing.
 *
 * Its connectivity (a `ConnectivitySource`, as a grpc-js channel's) aggregates the connections as
 * gRPC's balancers do: `ready` if any is ready, else `connecting` if any is, else `idle` if any is,
 * else `transient-failure`; `shutdown` once closed.
 */
export class H2Engine implements ConnectivitySource {
  readonly #connections: H2Connection[];
  readonly #pickFirst: boolean;
  #next = 0;
  readonly #listeners = new Set<ConnectivityListener>();
  #state: ConnectivityState = 'idle';
  #closing = false;
  /**
   * Receive memory for answers whose outputs all go into the caller's memory (decision 0026):
   * recycled once those outputs are copied out; emptied on close.
   */
  readonly messagePool = new MessagePool();

  constructor(endpoints: readonly Endpoint[], options: H2EngineOptions) {
    const { compression, loadBalancing, ...connection } = options;
    const onStateChange = (callsLost: boolean) => this.#update(callsLost);
    this.#connections = endpoints.map(
      (endpoint) => new H2Connection({ ...connection, endpoint, onStateChange }),
    );
    this.#compression = compression === 'none' ? undefined : compression;
    this.#pickFirst = loadBalancing === 'pick_first';
    const connections = this.#connections;
    this.#reroute =
      connections.length < 2
        ? undefined
        : { limit: connections.length - 1, next: (failed) => this.#alternative(failed) };
  }

  /** A call whose connection failed to dial moves here (undefined with one endpoint). */
  readonly #reroute: Reroute | undefined;

  /**
   * Another endpoint for a call whose dial failed: the first ready one in the configured order
   * (pick_first) or from the round-robin position, else the first that is not failing.
   */
  #alternative(failed: H2Connection): H2Connection | undefined {
    const connections = this.#connections;
    const count = connections.length;
    const start = this.#pickFirst ? 0 : this.#next;
    let candidate: H2Connection | undefined;
    for (let i = 0; i < count; i++) {
      const connection = connections[(start + i) % count] as H2Connection;
      if (connection === failed || connection.closed) continue;
      if (connection.state === 'ready') return connection;
      if (candidate === undefined && !connection.failing) candidate = connection;
    }
    return candidate;
  }

  connectivityState(connect = false): ConnectivityState {
    if (connect && this.#state === 'idle') {
      // Dial as a call would: every idle endpoint for round_robin, the first idle one for pick_first.
      for (const connection of this.#connections) {
        if (connection.state !== 'idle') continue;
        connection.connect();
        if (this.#pickFirst) break;
      }
    }
    return this.#state;
  }

  watchConnectivity(listener: ConnectivityListener): () => void {
    if (this.#state !== 'shutdown') this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #aggregate(): ConnectivityState {
    let idle = false;
    let connecting = false;
    let shutdown = true;
    for (const { state } of this.#connections) {
      if (state === 'ready') return 'ready';
      if (state === 'connecting') connecting = true;
      else if (state === 'idle') idle = true;
      if (state !== 'shutdown') shutdown = false;
    }
    if (shutdown) return 'shutdown';
    return connecting ? 'connecting' : idle ? 'idle' : 'transient-failure';
  }

  /**
   * A connection changed: report the aggregate's change, if any, to every watcher in order.
   * `callsLost`: the change was a session closing under its streams; the change says so when no
   * call is left in flight on any connection (none moved elsewhere or waits to be resent).
   */
  #update(callsLost = false): void {
    if (this.#closing) return;
    const to = this.#aggregate();
    const from = this.#state;
    if (to === from) return;
    this.#state = to;
    const change: ConnectivityChange =
      callsLost && this.#connections.every((connection) => connection.active === 0)
        ? { from, to, callsLost: true }
        : { from, to };
    for (const listener of [...this.#listeners]) listener(change);
    if (to === 'shutdown') this.#listeners.clear();
  }

  #withEncoding(options: H2CallOptions): H2CallOptions {
    if (this.#compression === undefined) return options;
    return { ...options, headers: { ...options.headers, 'grpc-encoding': this.#compression } };
  }

  #pick(): H2Connection {
    const connections = this.#connections;
    const count = connections.length;
    if (count === 1) return connections[0] as H2Connection;
    if (this.#pickFirst) {
      let candidate: H2Connection | undefined;
      for (const connection of connections) {
        if (connection.state === 'ready') return connection;
        if (candidate === undefined && !connection.failing) candidate = connection;
      }
      return candidate ?? (connections[0] as H2Connection);
    }
    for (let tried = 0; tried < count; tried++) {
      const connection = connections[this.#next] as H2Connection;
      this.#next = (this.#next + 1) % count;
      if (!connection.failing) return connection;
    }
    // Every endpoint is failing: the call dials the next one (and fails if it is still down).
    const connection = connections[this.#next] as H2Connection;
    this.#next = (this.#next + 1) % count;
    return connection;
  }

  /** Requests are compressed with this (`grpc-encoding`); responses are asked uncompressed. */
  readonly #compression: 'gzip' | 'deflate' | undefined;

  /** One request, one response. Rejects with H2StatusError. */
  unary(framed: readonly Uint8Array[], options: H2CallOptions): Promise<Buffer> {
    // Not an async function: uncompressed (the default), its frame was garbage on every call.
    const compression = this.#compression;
    if (compression === undefined) return this.#unary(framed, options);
    return compress(framed, compression).then((body) => this.#unary(body, options));
  }

  /** `unary` with the body ready; anything thrown while starting the call rejects. */
  #unary(body: readonly Uint8Array[], options: H2CallOptions): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      let message: Buffer | undefined;
      let count = 0;
      startH2Call(
        this.#pick(),
        body,
        this.#withEncoding(options),
        (received) => {
          message = received;
          count++;
        },
        (status) => {
          if (status.code !== 0) reject(new H2StatusError(status));
          else if (count !== 1 || message === undefined) {
            // grpc-js's wording for both, which the error mapping reads as DATA_LOSS.
            reject(
              new H2StatusError({
                code: count === 0 ? 12 : 13,
                details:
                  count === 0
                    ? 'No message received'
                    : `Response message parsing error: ${count} messages for a unary call`,
                metadata: status.metadata,
              }),
            );
          } else resolve(message);
        },
        this.#reroute,
      );
    });
  }

  /**
   * One request, a stream of responses (ModelStreamInfer with one request). Reading stops at
   * STREAM_HIGH_WATER unread responses; leaving the loop early cancels the call.
   */
  async *serverStream(framed: readonly Uint8Array[], options: H2CallOptions): AsyncIterable<Buffer> {
    const body = this.#compression ? await compress(framed, this.#compression) : framed;
    const queue: Buffer[] = [];
    let status: H2Status | undefined;
    let wake: (() => void) | undefined;
    let paused = false;
    const notify = () => {
      const waiting = wake;
      wake = undefined;
      waiting?.();
    };
    const call: H2Call = startH2Call(
      this.#pick(),
      body,
      this.#withEncoding(options),
      (message) => {
        queue.push(message);
        if (queue.length >= STREAM_HIGH_WATER && !paused) {
          paused = true;
          call.pause();
        }
        notify();
      },
      (ended) => {
        status = ended;
        notify();
      },
      this.#reroute,
    );
    let done = false;
    try {
      for (;;) {
        const message = queue.shift();
        if (message !== undefined) {
          if (paused && queue.length < STREAM_HIGH_WATER / 2) {
            paused = false;
            call.resume();
          }
          yield message;
          continue;
        }
        if (status !== undefined) {
          if (status.code !== 0) throw new H2StatusError(status);
          done = true;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      if (!done && status === undefined) call.cancel();
    }
  }

  /** Closes every connection (calls in flight are cancelled); watchers see `shutdown` last. */
  close(): void {
    this.#closing = true;
    for (const connection of this.#connections) connection.close();
    this.messagePool.clear();
    this.#closing = false;
    this.#update();
  }
}
