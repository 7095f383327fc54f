import {
  type CallScope,
  type ConnectivityChange,
  type ConnectivitySource,
  ErrorCode,
  InfergateError,
} from '@infergate/core';
import type { Breaker, BreakerEjection } from './breaker.js';

/**
 * What a router does the moment one of its targets' endpoints is known unreachable, and the calls
 * it has there. Two signals eject a target (open its breaker at once):
 *
 * - its channel's connectivity (when the target has a `ConnectivitySource`, e.g. a GrpcTransport):
 *   a connect that fails (`transient-failure`: refused, reset, timed out). A connection that was
 *   `ready` and is lost (the peer closed it, reset it or sent GOAWAY) is redialled at once rather
 *   than ejected: a server that went away refuses the redial within a round trip, while a healthy
 *   one that only rotated its connection (GOAWAY on max connection age, an idle timeout) answers
 *   and stays in rotation. A connection that becomes `ready` again half-opens an ejected target.
 * - `breaker.consecutiveGatewayFailures` in a row (the breaker ejects itself).
 *
 * On ejection every unary attempt still in flight on the target is aborted with UNAVAILABLE, so the
 * router moves it to another target now: calls waiting in a batcher's queue there would otherwise
 * be sent to the dead endpoint batch after batch, each failing only after its own connect attempt.
 * They were never sent (or were sent on a connection that is gone), so moving them runs nothing
 * twice that a retry would not. See docs/decisions/0014-connectivity-ejection.md.
 */
export class TargetEjection {
  readonly #name: string;
  readonly #breaker: Breaker;
  readonly #source: ConnectivitySource | undefined;
  readonly #attempts = new Set<CallScope>();
  readonly #onEject = (ejection: BreakerEjection) => this.#abortAll(ejection.reason);
  #unwatch: (() => void) | undefined;

  constructor(name: string, breaker: Breaker, source?: ConnectivitySource) {
    this.#name = name;
    this.#breaker = breaker;
    this.#source = source;
    breaker.on('eject', this.#onEject);
    this.#unwatch = source?.watchConnectivity((change) => this.#changed(change));
  }

  /** Unary attempts in flight on the target (that an ejection would move). */
  get inFlight(): number {
    return this.#attempts.size;
  }

  /** An attempt started on the target; `untrack` it when it ends. Its scope must be abortable. */
  track(scope: CallScope): void {
    this.#attempts.add(scope);
  }

  untrack(scope: CallScope): void {
    this.#attempts.delete(scope);
  }

  /** Stops watching the connectivity and the breaker. Idempotent. */
  dispose(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    this.#breaker.off('eject', this.#onEject);
    this.#attempts.clear();
  }

  #changed({ from, to }: ConnectivityChange): void {
    if (to === 'transient-failure') {
      this.#breaker.eject('the connection was refused or failed (channel in TRANSIENT_FAILURE)');
    } else if (from === 'ready' && (to === 'idle' || to === 'connecting')) {
      // Lost: redial now; a dead endpoint answers with a refusal (then `transient-failure`).
      this.#source?.connectivityState(true);
    } else if (to === 'ready') {
      this.#breaker.reachable();
    }
  }

  #abortAll(reason: string): void {
    if (this.#attempts.size === 0) return;
    const error = new InfergateError(
      ErrorCode.Unavailable,
      `target '${this.#name}' left rotation (${reason}); the call moves to another target`,
      { details: { target: this.#name, ejected: true } },
    );
    const attempts = [...this.#attempts];
    this.#attempts.clear();
    for (const scope of attempts) scope.abort(error);
  }
}
