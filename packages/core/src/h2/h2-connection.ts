import type { Socket } from 'node:net';
import { type ConnectionOptions, checkServerIdentity } from 'node:tls';
import type { ConnectivityState } from '../connectivity.js';
import { loadPem } from '../internal/credentials.js';
import { clearLongTimer, type LongTimer, setLongInterval, setLongTimeout } from '../internal/long-timer.js';
import type { Endpoint } from '../options.js';
import type { WritePolicy } from './h2-frame-writer.js';
import { H2Session } from './h2-session.js';
import { connectPlain, connectTls } from './h2-socket.js';

export interface H2ConnectionOptions {
  endpoint: Endpoint;
  secure: boolean;
  tls:
    | boolean
    | {
        ca?: string | Uint8Array | undefined;
        cert?: string | Uint8Array | undefined;
        key?: string | Uint8Array | undefined;
        serverName?: string | undefined;
      }
    | undefined;
  keepalive: { timeMs: number; timeoutMs: number; permitWithoutCalls: boolean };
  /** Redial backoff after a failed connect (gRPC's defaults: 1 s, growing 1.6× to 120 s, ±20%). */
  backoff: { initialMs: number; maxMs: number };
  /**
   * Told after each change of `state` (the engine aggregates its connections); `callsLost` when the
   * change is a ready session closing with streams on it (they have all failed by then).
   */
  onStateChange?: ((callsLost: boolean) => void) | undefined;
  /** Internal (benchmark and tests only): when request bytes go to the socket. */
  writePolicy?: WritePolicy | undefined;
  /** Internal (tests only): the first stream id of each connection. */
  firstStreamId?: number | undefined;
}

/**
 * One HTTP/2 connection to one endpoint, opened on first use and again after it closes or the server
 * sends GOAWAY. Pings keep it alive the way grpc-js's keepalive options say; it holds the event loop
 * only while calls are in flight.
 *
 * Its `state` follows gRPC's connectivity states, from the session's lifecycle:
 * - `idle`: no session (before the first call, or after a ready one closed or got GOAWAY);
 * - `connecting`: dialling, until the server's first SETTINGS frame arrives (`ready`);
 * - `transient-failure`: a dial that ended before the server spoke HTTP/2 (refused, reset, TLS
 *   refused, not an HTTP/2 server). After a backoff it dials again by itself, as grpc-js's
 *   subchannels do; a call may dial sooner;
 * - `shutdown`: closed for good.
 */
export class H2Connection {
  readonly authority: string;
  readonly #options: H2ConnectionOptions;
  #session: H2Session | undefined;
  /** Every session not yet closed: the current one and any draining after GOAWAY. */
  readonly #open = new Set<H2Session>();
  /** The last connection error, for the text of the calls it fails. */
  #lastError: Error | undefined;
  #active = 0;
  #keepalive: LongTimer | undefined;
  #closed = false;
  #state: ConnectivityState = 'idle';
  /** The next backoff's base, ms: grows after each failed dial, back to the initial on `ready`. */
  #backoffMs: number;
  #retry: LongTimer | undefined;
  /** The last dial failed and no session has been ready since. */
  #dialFailed = false;

  constructor(options: H2ConnectionOptions) {
    this.#options = options;
    const serverName = typeof options.tls === 'object' ? options.tls.serverName : undefined;
    const host = options.endpoint.host.includes(':') ? `[${options.endpoint.host}]` : options.endpoint.host;
    this.authority = serverName ?? `${host}:${options.endpoint.port}`;
    this.#backoffMs = options.backoff.initialMs;
  }

  /**
   * True while the connection is in `transient-failure`, or redialling after a failed dial and not
   * ready yet: calls go elsewhere while another endpoint can take them.
   */
  get failing(): boolean {
    return this.#state === 'transient-failure' || (this.#state === 'connecting' && this.#dialFailed);
  }

  /** The connection's connectivity state (see the class comment). */
  get state(): ConnectivityState {
    return this.#state;
  }

  #setState(state: ConnectivityState, callsLost = false): void {
    if (this.#state === state || this.#state === 'shutdown') return;
    this.#state = state;
    this.#options.onStateChange?.(callsLost);
  }

  /** Calls in flight here (started and not ended, including any waiting to be resent). */
  get active(): number {
    return this.#active;
  }

  /** Dials if there is no session (as a call would), without sending anything. */
  connect(): void {
    if (!this.#closed) this.session();
  }

  get lastError(): Error | undefined {
    return this.#lastError;
  }

  /** The live session, connecting if there is none. Throws once the connection is closed. */
  session(): H2Session {
    if (this.#closed) throw new Error('the connection is closed');
    const current = this.#session;
    if (current?.acceptsStreams) return current;
    return this.#connect();
  }

  /** Counts a call in (the connection holds the event loop while any is in flight). */
  enter(): void {
    if (this.#active++ === 0) for (const session of this.#open) session.ref();
  }

  leave(): void {
    if (--this.#active === 0) for (const session of this.#open) session.unref();
  }

  #dial(): Socket {
    const { endpoint, secure, tls } = this.#options;
    if (!secure) return connectPlain(endpoint.host, endpoint.port);
    const files = typeof tls === 'object' ? tls : {};
    const options: ConnectionOptions = { host: endpoint.host, port: endpoint.port, ALPNProtocols: ['h2'] };
    const ca = loadPem(files.ca, 'ca');
    const cert = loadPem(files.cert, 'cert');
    const key = loadPem(files.key, 'key');
    if (ca !== null) options.ca = ca;
    if (cert !== null) options.cert = cert;
    if (key !== null) options.key = key;
    const serverName = typeof tls === 'object' ? tls.serverName : undefined;
    if (serverName !== undefined) {
      // As grpc-js's ssl_target_name_override: SNI and the certificate check use this name.
      options.servername = serverName;
      options.checkServerIdentity = (_host, peer) => checkServerIdentity(serverName, peer);
    } else if (!/^[\d.]+$|:/.test(endpoint.host)) {
      options.servername = endpoint.host;
    }
    const socket = connectTls(options);
    socket.once('secureConnect', () => {
      // A server that does not agree to h2 over ALPN speaks something else.
      if (socket.alpnProtocol !== 'h2') {
        socket.destroy(
          new Error(
            `Protocol error: the server did not agree to HTTP/2 over ALPN (it chose ${socket.alpnProtocol || 'nothing'})`,
          ),
        );
      }
    });
    return socket;
  }

  #connect(): H2Session {
    const { secure } = this.#options;
    clearLongTimer(this.#retry);
    this.#retry = undefined;
    const socket = this.#dial();
    // Ready once the server has spoken HTTP/2 (its SETTINGS frame), not when the socket opens: a
    // server on the wrong port accepts the socket and then fails.
    let ready = false;
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      if (this.#session === session) this.#lastError = undefined;
    });
    const session: H2Session = new H2Session(socket, {
      authority: this.authority,
      scheme: secure ? 'https' : 'http',
      writePolicy: this.#options.writePolicy,
      firstStreamId: this.#options.firstStreamId,
      events: {
        onReady: () => {
          ready = true;
          if (this.#session !== session) return;
          this.#backoffMs = this.#options.backoff.initialMs;
          this.#dialFailed = false;
          this.#setState('ready');
        },
        onDraining: () => {
          // No new streams on it; the next call opens a fresh connection, running ones finish here.
          if (this.#session !== session) return;
          this.#session = undefined;
          this.#lost(ready);
        },
        onClose: (error, streams) => {
          if (error !== undefined) this.#lastError = error;
          this.#open.delete(session);
          if (this.#session === session) {
            this.#session = undefined;
            this.#lost(ready, streams > 0);
          }
          if (this.#session === undefined) this.#stopKeepalive();
        },
      },
    });
    this.#session = session;
    this.#open.add(session);
    if (this.#active === 0) session.unref();
    this.#startKeepalive();
    this.#setState('connecting');
    return session;
  }

  /**
   * The current session ended: `idle` if it had been ready, else a failed dial. `callsLost`: it
   * closed with streams on it (not a GOAWAY), which have failed with it.
   */
  #lost(wasReady: boolean, callsLost = false): void {
    if (this.#closed) return;
    if (wasReady) {
      this.#setState('idle', callsLost);
      return;
    }
    this.#dialFailed = true;
    this.#setState('transient-failure');
    const { maxMs } = this.#options.backoff;
    const delay = this.#backoffMs * (0.8 + 0.4 * Math.random());
    this.#backoffMs = Math.min(this.#backoffMs * 1.6, maxMs);
    clearLongTimer(this.#retry);
    // grpc.max_reconnect_backoff_ms has no upper bound.
    this.#retry = setLongTimeout(() => {
      this.#retry = undefined;
      if (this.#state === 'transient-failure' && this.#session === undefined) this.connect();
    }, delay);
    this.#retry?.unref();
  }

  #startKeepalive(): void {
    if (this.#keepalive !== undefined) return;
    const { timeMs, timeoutMs, permitWithoutCalls } = this.#options.keepalive;
    // keepalive.timeMs (or grpc.keepalive_time_ms) has no upper bound: over 2^31 − 1 ms a plain
    // interval would ping every millisecond.
    this.#keepalive = setLongInterval(() => {
      const session = this.#session;
      if (session === undefined || session.closed || (!permitWithoutCalls && this.#active === 0)) return;
      session.ping(timeoutMs);
    }, timeMs);
    this.#keepalive?.unref();
  }

  #stopKeepalive(): void {
    clearLongTimer(this.#keepalive);
    this.#keepalive = undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the connection; calls in flight are cancelled. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearLongTimer(this.#retry);
    this.#retry = undefined;
    this.#stopKeepalive();
    this.#session = undefined;
    for (const session of this.#open) session.destroy(new Error('the client was closed'));
    this.#open.clear();
    this.#state = 'shutdown';
    this.#options.onStateChange?.(false);
  }
}
