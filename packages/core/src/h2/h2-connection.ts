import type { ClientHttp2Session, SecureClientSessionOptions } from 'node:http2';
import { createRequire } from 'node:module';
import { checkServerIdentity } from 'node:tls';
import type { ConnectivityState } from '../connectivity.js';
import { loadPem } from '../internal/credentials.js';
import type { Endpoint } from '../options.js';

// node:http2 loads on first use, like grpc-js: code that only imports core's types pays nothing.
const requireFromHere = createRequire(import.meta.url);
let http2: typeof import('node:http2') | undefined;
function loadHttp2(): typeof import('node:http2') {
  http2 ??= requireFromHere('node:http2') as typeof import('node:http2');
  return http2;
}

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
  /** Told after each change of `state` (the engine aggregates its connections). */
  onStateChange?: (() => void) | undefined;
}

/**
 * Receive windows. HTTP/2's default (64 KiB per stream and per connection) makes a 1 MiB answer wait
 * for 16 WINDOW_UPDATE round trips; gRPC's C core grows its windows by bandwidth probing to the same
 * end. 16 MiB per stream and 64 MiB for the connection keep large tensors flowing.
 */
const STREAM_WINDOW = 16 * 1024 * 1024;
const CONNECTION_WINDOW = 64 * 1024 * 1024;

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
  #session: ClientHttp2Session | undefined;
  /** Every session not yet closed: the current one and any draining after GOAWAY. */
  readonly #open = new Set<ClientHttp2Session>();
  /** The last connection error, for the text of the calls it fails. */
  #lastError: Error | undefined;
  #active = 0;
  #keepalive: NodeJS.Timeout | undefined;
  #closed = false;
  #state: ConnectivityState = 'idle';
  /** The next backoff's base, ms: grows after each failed dial, back to the initial on `ready`. */
  #backoffMs: number;
  #retry: NodeJS.Timeout | undefined;

  constructor(options: H2ConnectionOptions) {
    this.#options = options;
    const serverName = typeof options.tls === 'object' ? options.tls.serverName : undefined;
    const host = options.endpoint.host.includes(':') ? `[${options.endpoint.host}]` : options.endpoint.host;
    this.authority = serverName ?? `${host}:${options.endpoint.port}`;
    this.#backoffMs = options.backoff.initialMs;
  }

  /** The connection's connectivity state (see the class comment). */
  get state(): ConnectivityState {
    return this.#state;
  }

  #setState(state: ConnectivityState): void {
    if (this.#state === state || this.#state === 'shutdown') return;
    this.#state = state;
    this.#options.onStateChange?.();
  }

  /** Dials if there is no session (as a call would), without sending anything. */
  connect(): void {
    if (!this.#closed) this.session();
  }

  get lastError(): Error | undefined {
    return this.#lastError;
  }

  /** The live session, connecting if there is none. Throws once the connection is closed. */
  session(): ClientHttp2Session {
    if (this.#closed) throw new Error('the connection is closed');
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    return this.#connect();
  }

  /** Counts a call in (the connection holds the event loop while any is in flight). */
  enter(): void {
    if (this.#active++ === 0) this.#session?.ref();
  }

  leave(): void {
    if (--this.#active === 0) this.#session?.unref();
  }

  #connect(): ClientHttp2Session {
    const { endpoint, secure, tls } = this.#options;
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    const options: SecureClientSessionOptions = {
      settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
      // Node refuses new streams (ENHANCE_YOUR_CALM) once a session buffers more than this many
      // MB; 64 calls of 1 MiB in flight pass the 10 MB default. Message size is bounded by
      // maxMessageBytes and calls by the caller's concurrency, as with grpc-js (which sets the same).
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
    };
    if (secure) {
      const files = typeof tls === 'object' ? tls : {};
      const ca = loadPem(files.ca, 'ca');
      const cert = loadPem(files.cert, 'cert');
      const key = loadPem(files.key, 'key');
      if (ca !== null) options.ca = ca;
      if (cert !== null) options.cert = cert;
      if (key !== null) options.key = key;
      options.ALPNProtocols = ['h2'];
      const serverName = typeof tls === 'object' ? tls.serverName : undefined;
      if (serverName !== undefined) {
        // As grpc-js's ssl_target_name_override: SNI and the certificate check use this name.
        options.servername = serverName;
        options.checkServerIdentity = (_host, peer) => checkServerIdentity(serverName, peer);
      }
    }
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const session = loadHttp2().connect(`${secure ? 'https' : 'http'}://${host}:${endpoint.port}`, options);
    this.#session = session;
    // A session drained after GOAWAY may end without a 'close' event: forget the ones destroyed.
    for (const old of this.#open) if (old.destroyed) this.#open.delete(old);
    this.#open.add(session);
    // Ready once the server has spoken HTTP/2 (its SETTINGS frame), not when the socket opens: a
    // server on the wrong port accepts the socket and then fails.
    let ready = false;
    session.on('connect', () => {
      this.#lastError = undefined;
      session.setLocalWindowSize(CONNECTION_WINDOW);
    });
    session.once('remoteSettings', () => {
      ready = true;
      if (this.#session !== session) return;
      this.#backoffMs = this.#options.backoff.initialMs;
      this.#setState('ready');
    });
    session.on('error', (error: Error) => {
      this.#lastError = error;
    });
    session.on('goaway', () => {
      // No new streams on it; the next call opens a fresh connection, running ones finish here.
      if (this.#session !== session) return;
      this.#session = undefined;
      this.#lost(ready);
    });
    session.on('close', () => {
      this.#open.delete(session);
      if (this.#session === session) {
        this.#session = undefined;
        this.#lost(ready);
      }
      if (this.#session === undefined) this.#stopKeepalive();
    });
    if (this.#active === 0) session.unref();
    this.#startKeepalive();
    this.#setState('connecting');
    return session;
  }

  /** The current session ended: `idle` if it had been ready, else a failed dial. */
  #lost(wasReady: boolean): void {
    if (this.#closed) return;
    if (wasReady) {
      this.#setState('idle');
      return;
    }
    this.#setState('transient-failure');
    const { maxMs } = this.#options.backoff;
    const delay = this.#backoffMs * (0.8 + 0.4 * Math.random());
    this.#backoffMs = Math.min(this.#backoffMs * 1.6, maxMs);
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#state === 'transient-failure' && this.#session === undefined) this.connect();
    }, delay);
    this.#retry.unref();
  }

  #startKeepalive(): void {
    if (this.#keepalive !== undefined) return;
    const { timeMs, timeoutMs, permitWithoutCalls } = this.#options.keepalive;
    this.#keepalive = setInterval(() => {
      const session = this.#session;
      if (session === undefined || session.destroyed || (!permitWithoutCalls && this.#active === 0)) return;
      const timer = setTimeout(() => {
        session.destroy(new Error(`keepalive ping not answered within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      const sent = session.ping((error) => {
        clearTimeout(timer);
        if (error && !session.destroyed) session.destroy(error);
      });
      if (!sent) clearTimeout(timer);
    }, timeMs);
    this.#keepalive.unref();
  }

  #stopKeepalive(): void {
    clearInterval(this.#keepalive);
    this.#keepalive = undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the connection; calls in flight are cancelled. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#stopKeepalive();
    this.#session = undefined;
    for (const session of this.#open) session.destroy();
    this.#open.clear();
    this.#state = 'shutdown';
    this.#options.onStateChange?.();
  }
}
