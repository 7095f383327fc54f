import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';

/**
 * The sleeper thread: keeps the pending wake-ups and blocks in `Atomics.wait` until the earliest
 * one is due (a futex with a timeout precise to microseconds, where Node's timers count whole
 * milliseconds), or until the main thread rings the bell to say it posted a new one. It never
 * returns to its own event loop, so it reads its requests with `receiveMessageOnPort`.
 */
const SLEEPER_SOURCE = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const { port, bell } = workerData;
const due = [];
for (;;) {
  const rung = Atomics.load(bell, 0);
  for (let entry = receiveMessageOnPort(port); entry !== undefined; entry = receiveMessageOnPort(port)) {
    due.push(entry.message);
  }
  const now = process.hrtime.bigint();
  let next;
  for (let i = due.length - 1; i >= 0; i--) {
    const entry = due[i];
    if (entry.at <= now) {
      port.postMessage(entry.id);
      due.splice(i, 1);
    } else if (next === undefined || entry.at < next) {
      next = entry.at;
    }
  }
  Atomics.wait(bell, 0, rung, next === undefined ? Infinity : Number(next - now) / 1e6);
}
`;

class PreciseWake {
  readonly #port: MessagePort;
  readonly #bell = new Int32Array(new SharedArrayBuffer(4));
  readonly #pending = new Map<number, { at: bigint; callback: () => void }>();
  #nextId = 0;
  #failed = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const worker = new Worker(SLEEPER_SOURCE, {
      eval: true,
      workerData: { port: port2, bell: this.#bell },
      transferList: [port2],
    });
    // Neither the thread nor the port keeps the process alive unless a wake-up is pending.
    worker.unref();
    port1.on('message', (id: number) => this.#wake(id));
    port1.unref();
    const fail = () => {
      if (this.#failed) return;
      this.#failed = true;
      for (const [id, { at }] of this.#pending) setTimeout(() => this.#wake(id), msUntil(at));
    };
    worker.once('error', fail);
    worker.once('exit', fail);
  }

  at(at: bigint, callback: () => void): void {
    const id = this.#nextId++;
    this.#pending.set(id, { at, callback });
    if (this.#failed) {
      setTimeout(() => this.#wake(id), msUntil(at));
      return;
    }
    if (this.#pending.size === 1) this.#port.ref();
    this.#port.postMessage({ id, at });
    Atomics.add(this.#bell, 0, 1);
    Atomics.notify(this.#bell, 0);
  }

  #wake(id: number): void {
    const entry = this.#pending.get(id);
    if (entry === undefined) return;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#port.unref();
    entry.callback();
  }
}

function msUntil(at: bigint): number {
  return Math.max(0, Number(at - process.hrtime.bigint()) / 1e6);
}

let shared: PreciseWake | undefined;

/**
 * Calls `callback` on this thread once `process.hrtime.bigint()` has reached `at`, without keeping
 * a core busy: one sleeper thread per process waits on a futex for every caller, so the wake-up
 * comes as soon as the OS schedules the two threads (tens of microseconds on an idle machine),
 * where a Node timer rounds to whole milliseconds. Should the thread fail, Node's timers take over.
 */
export function wakeAt(at: bigint, callback: () => void): void {
  shared ??= new PreciseWake();
  shared.at(at, callback);
}
