import type { ClientHttp2Session, SecureClientSessionOptions } from 'node:http2';
import { createRequire } from 'node:module';
import { checkServerIdentity } from 'node:tls';
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
 */
export class H2Connection {
  readonly authority: string;
  readonly #options: H2ConnectionOptions;
  #session: ClientHttp2Session | undefined;
  /** The last connection error, for the text of the calls it fails. */
  #lastError: Error | undefined;
  #active = 0;
  #keepalive: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: H2ConnectionOptions) {
    this.#options = options;
    const serverName = typeof options.tls === 'object' ? options.tls.serverName : undefined;
    const host = options.endpoint.host.includes(':') ? `[${options.endpoint.host}]` : options.endpoint.host;
    this.authority = serverName ?? `${host}:${options.endpoint.port}`;
  }

  get lastError(): Error | undefined {
    return this.#lastError;
  }

  /** The live session, connecting if there is none. */
  session(): ClientHttp2Session {
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
    const session = loadHttp2().connect(`${secure ? 'https' : 'http'}://${host}:${endpoint.port}`, options);
    this.#session = session;
    session.on('connect', () => {
      this.#lastError = undefined;
      session.setLocalWindowSize(CONNECTION_WINDOW);
    });
    session.on('error', (error: Error) => {
      this.#lastError = error;
    });
    session.on('goaway', () => {
      // No new streams on it; the next call opens a fresh connection, running ones finish here.
      if (this.#session === session) this.#session = undefined;
    });
    session.on('close', () => {
      if (this.#session === session) this.#session = undefined;
      if (this.#session === undefined) this.#stopKeepalive();
    });
    if (this.#active === 0) session.unref();
    this.#startKeepalive();
    return session;
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
    this.#closed = true;
    this.#stopKeepalive();
    this.#session?.destroy();
    this.#session = undefined;
  }
}
