/**
 * A channel's connectivity, as gRPC defines it: `idle` (no connection, none wanted yet),
 * `connecting`, `ready`, `transient-failure` (the last connect failed: refused, reset, timed out;
 * calls fail at once until the backoff ends) and `shutdown` (closed for good).
 */
export type ConnectivityState = 'idle' | 'connecting' | 'ready' | 'transient-failure' | 'shutdown';

export interface ConnectivityChange {
  readonly from: ConnectivityState;
  readonly to: ConnectivityState;
  /**
   * True when this change is a connection closing under its calls (not a GOAWAY, whose calls run
   * on) and no call is left in flight on the transport: every call it had sent has failed, and each
   * one's error is on its way. A layer that keeps its own record of what it sent (a micro-batcher)
   * can fail those calls now instead of waiting for each error. Only the http2 engine reports it.
   */
  readonly callsLost?: boolean;
}

export type ConnectivityListener = (change: ConnectivityChange) => void;

/**
 * A transport that can say whether its connection is up, without sending a call. Optional on
 * `InferTransport`: the gRPC transport has it; HTTP and in-memory transports need not. A router
 * uses it to take a target out of rotation the moment its connection is lost or refused.
 */
export interface ConnectivitySource {
  /** The state now; `connect: true` also starts connecting when idle (as a call would). */
  connectivityState(connect?: boolean): ConnectivityState;
  /**
   * Calls `listener` on every change of state, in order, until the returned function is called or
   * the transport closes (the last change reported is to `shutdown`). Holds no timer: a watch does
   * not keep the process alive.
   */
  watchConnectivity(listener: ConnectivityListener): () => void;
}

/** True for an object that has the connectivity hook (a GrpcTransport, or a layer forwarding it). */
export function isConnectivitySource(value: unknown): value is ConnectivitySource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<ConnectivitySource>).watchConnectivity === 'function' &&
    typeof (value as Partial<ConnectivitySource>).connectivityState === 'function'
  );
}

// grpc-js's ConnectivityState enum values (IDLE 0 … SHUTDOWN 4); read by number so that this file
// does not load grpc-js itself (core loads it lazily).
const STATES: readonly ConnectivityState[] = ['idle', 'connecting', 'ready', 'transient-failure', 'shutdown'];

function stateOf(value: number): ConnectivityState {
  return STATES[value] ?? 'idle';
}

/** The part of a grpc-js channel this file uses (`client.getChannel()`). */
export interface WatchableChannel {
  getConnectivityState(tryToConnect: boolean): number;
  watchConnectivityState(
    currentState: number,
    deadline: Date | number,
    callback: (error?: Error) => void,
  ): void;
}

/**
 * One watch loop over a grpc-js channel, shared by every listener: grpc-js calls a watcher once
 * per change, so the loop re-arms after each. The watch has no deadline, hence no timer; when the
 * channel shuts down the loop reports `shutdown` and ends.
 */
export class ChannelConnectivity implements ConnectivitySource {
  readonly #channel: WatchableChannel;
  readonly #listeners = new Set<ConnectivityListener>();
  #watching = false;
  #last: number;

  constructor(channel: WatchableChannel) {
    this.#channel = channel;
    this.#last = channel.getConnectivityState(false);
  }

  connectivityState(connect = false): ConnectivityState {
    try {
      return stateOf(this.#channel.getConnectivityState(connect));
    } catch {
      return 'shutdown'; // grpc-js throws once the channel is closed
    }
  }

  watchConnectivity(listener: ConnectivityListener): () => void {
    this.#listeners.add(listener);
    if (!this.#watching) this.#arm();
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #arm(): void {
    const current = this.#channel.getConnectivityState(false);
    if (current !== this.#last) {
      // Changed between two watches (or before the first): report it before waiting again.
      this.#emit(this.#last, current);
      this.#last = current;
    }
    if (current === 4 /* SHUTDOWN */ || this.#listeners.size === 0) {
      this.#watching = false;
      return;
    }
    this.#watching = true;
    try {
      this.#channel.watchConnectivityState(current, Number.POSITIVE_INFINITY, () => this.#arm());
    } catch {
      // Closed between the read and the watch.
      this.#watching = false;
      this.#emit(current, 4);
      this.#last = 4;
    }
  }

  #emit(from: number, to: number): void {
    const change: ConnectivityChange = { from: stateOf(from), to: stateOf(to) };
    for (const listener of [...this.#listeners]) listener(change);
  }
}
