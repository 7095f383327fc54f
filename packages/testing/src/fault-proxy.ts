import { connect, createServer, type Server, type Socket } from 'node:net';
import { clearLongTimer, type LongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';

/**
 * What the proxy does to traffic right now. Switch at any time with `proxy.set(fault)`; each
 * switch applies to connections already open as well as new ones.
 */
export type ProxyFault =
  /** Pass everything through untouched. */
  | { readonly kind: 'pass' }
  /** Hold every chunk, both ways, for `ms` before passing it on (latency, not a throughput cap). */
  | { readonly kind: 'delay'; readonly ms: number }
  /**
   * Accept connections and stay silent: nothing is read or passed on either way (a partition, a
   * hung peer). Switching back to `pass` lets the held bytes through.
   */
  | { readonly kind: 'blackhole' }
  /** Reset every open connection (TCP RST) and each new one as soon as it is accepted. */
  | { readonly kind: 'reset' }
  /**
   * Pass `afterBytes` more bytes from the server to the client on each connection, then reset it:
   * an answer cut off mid-message. A client socket that reads the last bytes and the reset in one
   * poll may see an orderly end rather than `ECONNRESET` (libuv's reading of a short read and a
   * hang-up); either way the message is cut off.
   */
  | { readonly kind: 'truncate'; readonly afterBytes: number }
  /** Pass at most `bytesPerSecond` each way, per connection. */
  | { readonly kind: 'throttle'; readonly bytesPerSecond: number }
  /** Stop listening (connection refused) and reset every open connection: a dead process. */
  | { readonly kind: 'refuse' };

export interface FaultProxyOptions {
  /** Where traffic goes: `host:port` (a Triton or reference server's gRPC address). */
  target: string;
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
}

export interface FaultProxy {
  /** `host:port` to give a client instead of the target's. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The fault in force. */
  readonly fault: ProxyFault;
  /** Connections open right now. */
  readonly connections: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Switches the fault (resolves once a `refuse` stopped listening or a listen resumed). */
  set(fault: ProxyFault): Promise<void>;
  /** Stops listening and destroys every connection. Idempotent. */
  close(): Promise<void>;
}

const PASS: ProxyFault = { kind: 'pass' };
const THROTTLE_TICK_MS = 10;

function parseTarget(target: string): { host: string; port: number } {
  const at = target.lastIndexOf(':');
  const port = Number(target.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535)
    throw new TypeError(`target must be host:port, got '${target}'`);
  return { host: target.slice(0, at).replace(/^\[|\]$/g, ''), port };
}

function reset(socket: Socket): void {
  if (!socket.destroyed) socket.resetAndDestroy();
}

/** One client connection and its upstream twin. */
class Link {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly #proxy: { fault: ProxyFault };
  readonly #timers = new Set<LongTimer>();
  /** Server→client bytes still allowed under `truncate` (set when the fault is). */
  budget = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(client: Socket, upstream: Socket, proxy: { fault: ProxyFault }, onClose: () => void) {
    this.client = client;
    this.upstream = upstream;
    this.#proxy = proxy;
    const close = () => {
      if (this.#closed) return;
      this.#closed = true;
      for (const timer of this.#timers) clearLongTimer(timer);
      this.#timers.clear();
      onClose();
    };
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      // A reset or error on one side resets the other; an orderly end is passed on as an end (in
      // #pipe), and the link is over once both sides have closed.
      socket.on('error', () => reset(other));
      socket.on('close', (hadError: boolean) => {
        if (hadError) reset(other);
        if (client.destroyed && upstream.destroyed) close();
      });
    }
    this.#pipe(client, upstream, false);
    this.#pipe(upstream, client, true);
  }

  /** Applies a newly set fault to this open connection. */
  apply(fault: ProxyFault): void {
    this.budget = fault.kind === 'truncate' ? fault.afterBytes : Number.POSITIVE_INFINITY;
    if (fault.kind === 'reset' || fault.kind === 'refuse') {
      reset(this.client);
      reset(this.upstream);
    } else if (fault.kind === 'blackhole') {
      this.client.pause();
      this.upstream.pause();
    } else {
      this.client.resume();
      this.upstream.resume();
    }
  }

  #later(ms: number, action: () => void): void {
    const timer = setLongTimeout(() => {
      if (timer !== undefined) this.#timers.delete(timer);
      action();
    }, ms);
    if (timer !== undefined) this.#timers.add(timer);
  }

  #pipe(from: Socket, to: Socket, downstream: boolean): void {
    // A throttled chunk still trickling out when `from` ends: end `to` after it, not before.
    let trickling = false;
    let endPending = false;
    // Once cut off, the connection only waits for its reset: an end must not overtake it.
    let truncated = false;
    from.on('data', (chunk: Buffer) => {
      const fault = this.#proxy.fault;
      if (fault.kind === 'blackhole') {
        // A chunk already read when the blackhole began: hold it (it passes if the fault is lifted).
        from.pause();
        from.unshift(chunk);
        return;
      }
      if (downstream && this.budget !== Number.POSITIVE_INFINITY) {
        if (chunk.length > this.budget) {
          to.write(chunk.subarray(0, this.budget));
          this.budget = 0;
          truncated = true;
          // Let the partial write leave before the reset.
          this.#later(5, () => {
            reset(this.client);
            reset(this.upstream);
          });
          from.pause();
          return;
        }
        this.budget -= chunk.length;
      }
      if (fault.kind === 'delay') {
        this.#later(fault.ms, () => {
          if (!to.destroyed) to.write(chunk);
        });
      } else if (fault.kind === 'throttle') {
        from.pause();
        trickling = true;
        this.#trickle(chunk, to, fault.bytesPerSecond, () => {
          trickling = false;
          if (endPending) to.end();
          else if (this.#proxy.fault.kind !== 'blackhole') from.resume();
        });
      } else if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => {
          if (this.#proxy.fault.kind !== 'blackhole') from.resume();
        });
      }
    });
    from.on('end', () => {
      if (truncated) return;
      const fault = this.#proxy.fault;
      // Under a delay the end follows the held chunks, not overtakes them.
      if (fault.kind === 'delay') this.#later(fault.ms, () => to.end());
      else if (trickling) endPending = true;
      else to.end();
    });
  }

  #trickle(chunk: Buffer, to: Socket, bytesPerSecond: number, done: () => void): void {
    const slice = Math.max(1, Math.floor((bytesPerSecond * THROTTLE_TICK_MS) / 1000));
    if (to.destroyed) return;
    to.write(chunk.subarray(0, slice));
    if (chunk.length <= slice) {
      done();
      return;
    }
    this.#later(THROTTLE_TICK_MS, () => this.#trickle(chunk.subarray(slice), to, bytesPerSecond, done));
  }
}

/**
 * Starts a TCP proxy on 127.0.0.1 (a free port by default) in front of `target`, whose behaviour can
 * be switched on command: delay, blackhole, reset, truncate, throttle, refuse. For chaos tests of
 * clients, batchers and routers: point the client at `proxy.url` and break the network under it.
 */
export async function createFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = parseTarget(options.target);
  const host = options.host ?? '127.0.0.1';
  const links = new Set<Link>();
  const state = { fault: PASS };
  let accepted = 0;
  let closed = false;
  let listening: Server | undefined;
  let port = options.port ?? 0;

  const accept = (client: Socket) => {
    accepted += 1;
    if (state.fault.kind === 'reset' || state.fault.kind === 'refuse') {
      client.on('error', () => {});
      reset(client);
      return;
    }
    const upstream = connect({ host: target.host, port: target.port });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const link = new Link(client, upstream, state, () => links.delete(link));
    links.add(link);
    link.apply(state.fault);
  };

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const server = createServer(accept);
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const address = server.address();
        if (address !== null && typeof address === 'object') port = address.port;
        listening = server;
        resolve();
      });
    });

  const stopListening = (): Promise<void> => {
    const server = listening;
    listening = undefined;
    if (server === undefined) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  };

  await listen();
  return {
    url: `${host}:${port}`,
    host,
    port,
    get fault() {
      return state.fault;
    },
    get connections() {
      return links.size;
    },
    get accepted() {
      return accepted;
    },
    async set(fault: ProxyFault) {
      if (closed) throw new Error('the fault proxy is closed');
      state.fault = fault;
      for (const link of [...links]) link.apply(fault);
      if (fault.kind === 'refuse') await stopListening();
      else if (listening === undefined) await listen();
    },
    async close() {
      if (closed) return;
      closed = true;
      const stopped = stopListening();
      for (const link of [...links]) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await stopped;
    },
  };
}
