import type { ConnectivityChange, ConnectivitySource } from '@infergate/core';
import type { Breaker } from './breaker.js';

/**
 * Longest a target is avoided after its connection was lost while the redial has not answered
 * (neither `ready` nor refused, e.g. a blackholed endpoint until the connect times out): past it,
 * calls may go there again and decide for themselves.
 */
export const REDIAL_GRACE_MS = 10_000;

/**
 * Takes a target out of rotation the moment its channel shows the endpoint is unreachable, and
 * lets it back once the channel is ready again. Watches a `ConnectivitySource` (a GrpcTransport,
 * or the channel named in the target's `connectivity`):
 *
 * - a connect that fails (`transient-failure`: refused, reset, timed out) ejects the target (its
 *   breaker opens now, before any call has to fail there);
 * - a connection that was `ready` and is lost (the peer closed it, reset it or sent GOAWAY) is
 *   redialled at once rather than ejected: a server that went away refuses the redial within a
 *   round trip (then `transient-failure`), while a healthy one that only rotated its connection
 *   (GOAWAY on a maximum connection age, an idle timeout) answers and stays in rotation. Until the
 *   redial answers (at most `REDIAL_GRACE_MS`) the target is `lost`: the router sends new calls
 *   elsewhere when another candidate can take them, so the first signal of a crash — the lost
 *   connection — already moves traffic, without ejecting a healthy target that rotated;
 * - `ready` half-opens an ejected target, as a ready probe does: one call then decides.
 *
 * Calls already in flight or queued on the target are left where they are: they fail there and
 * fall back (see docs/decisions/0014-connectivity-ejection.md for why they are not moved).
 */
export class TargetEjection {
  readonly #breaker: Breaker;
  readonly #source: ConnectivitySource;
  #unwatch: (() => void) | undefined;
  /** Epoch ms until which the target counts as lost (0: not lost). */
  #lostUntil = 0;

  constructor(breaker: Breaker, source: ConnectivitySource) {
    this.#breaker = breaker;
    this.#source = source;
    this.#unwatch = source.watchConnectivity((change) => this.#changed(change));
  }

  /** True from a lost connection until its redial is ready or refused (at most `REDIAL_GRACE_MS`). */
  lost(now: number): boolean {
    return this.#lostUntil > now;
  }

  /** Stops watching. Idempotent. */
  dispose(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
  }

  #changed({ from, to }: ConnectivityChange): void {
    if (this.#unwatch === undefined) return;
    if (to === 'transient-failure') {
      this.#lostUntil = 0; // the breaker keeps it out now
      this.#breaker.eject('the connection was refused or failed (channel in TRANSIENT_FAILURE)');
    } else if (from === 'ready' && (to === 'idle' || to === 'connecting')) {
      // Lost: avoided from now on, and redialled once this turn is over (not from inside the
      // channel's state-change callback). A dead endpoint answers with a refusal:
      // `transient-failure`. Not in a microtask: the calls that failed with the connection move to
      // another target through the microtask queue, and a dial there (a socket, a session) ran in
      // the middle of the first one's move. The target is passed over meanwhile anyway.
      this.#lostUntil = Date.now() + REDIAL_GRACE_MS;
      setImmediate(() => {
        if (this.#unwatch !== undefined) this.#source.connectivityState(true);
      });
    } else if (to === 'ready') {
      this.#lostUntil = 0;
      this.#breaker.reachable();
    } else if (to === 'shutdown') {
      this.#lostUntil = 0;
    }
  }
}
