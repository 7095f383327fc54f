import { RpcError } from '../rpc-error.js';
import { status } from './grpc-status.js';

/** Holds callers while closed; `open()` lets them all through. */
export class Gate {
  #waiters = new Set<() => void>();
  #open = true;

  get isOpen(): boolean {
    return this.#open;
  }

  close(): void {
    this.#open = false;
  }

  open(): void {
    this.#open = true;
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const release of waiters) release();
  }

  /** Resolves when the gate is open; rejects with CANCELLED if `signal` aborts first. */
  wait(signal: AbortSignal): Promise<void> {
    if (this.#open) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const release = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#waiters.delete(release);
        reject(new RpcError(status.CANCELLED, 'cancelled while the server was paused'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(release);
    });
  }
}
