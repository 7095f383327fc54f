// How much work the client does when a target's connection is lost, before the survivor's first
// batch can leave (Node's HTTP/2 writes at the next immediate phase): in memory, no servers, no
// network. A router a → b with a micro-batcher under each (the failover benchmark's setup,
// defaults), `--calls` calls sent to a; a's batches in flight then fail UNAVAILABLE at once (the
// connection lost) and a refuses anything sent later. As the http2 engine does, a's transport then
// reports the loss on its connectivity (`callsLost`), which a batcher that watches it acts on. Per trial: lost → first call handed to b's
// transport, then the rest of that turn up to the next immediate phase, in wall time and in CPU
// time, and how many calls b's batcher holds by then. Medians of `--trials` after `--warmups`
// warm-up trials; `--warmups 0 --trials 1` reads a process's first loss, whose failure path runs
// for the first time (as in a failover: the process has only seen successes before).
//   node scripts/bootstrap.mjs --dist bench/failover-wave.ts [--calls 32] [--trials 200] [--warmups 20]
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createMicroBatcher } from '@infergate/batcher';
import {
  buildInferRequest,
  type ConnectivityListener,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
} from '@infergate/core';
import { createRouter } from '@infergate/router';
import { flag, median } from './lib.js';

const calls = Number(flag('calls') ?? 32);
const trials = Number(flag('trials') ?? 200);
const warmups = Number(flag('warmups') ?? 20);
const batcherOptions = { models: { chaos_gpu: { maxBatchSize: 64 } }, serverBatching: 'ignore' } as const;

interface Pending {
  reject(error: Error): void;
}

function unavailable(): InfergateError {
  return new InfergateError(ErrorCode.Unavailable, 'No connection established. Last error: connection lost', {
    retryable: true,
  });
}

interface Trial {
  toB: number;
  rest: number;
  restCpu: number;
  queuedInB: number;
  batchesToB: number;
}

async function trial(): Promise<Trial> {
  let dead = false;
  const inFlightOnA: Pending[] = [];
  const watchers = new Set<ConnectivityListener>();
  const a: InferTransport = {
    infer: () =>
      dead
        ? Promise.reject(unavailable())
        : new Promise<InferResponse>((_resolve, reject) => inFlightOnA.push({ reject })),
    stream: () => {
      throw new Error('no streams here');
    },
    connectivityState: () => (dead ? 'idle' : 'ready'),
    watchConnectivity: (listener) => {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
  };
  const heldOnB: Pending[] = [];
  let lostAt = 0;
  let firstToB = 0;
  let batchesToB = 0;
  let done: (value: { rest: number; restCpu: number; queuedInB: number }) => void = () => {};
  const measured = new Promise<{ rest: number; restCpu: number; queuedInB: number }>((resolve) => {
    done = resolve;
  });
  const b: InferTransport = {
    infer: (request: InferRequest) => {
      batchesToB += 1;
      if (firstToB === 0) {
        firstToB = performance.now();
        const cpu = process.cpuUsage();
        setImmediate(() => {
          const spent = process.cpuUsage(cpu);
          done({
            rest: performance.now() - firstToB,
            restCpu: (spent.user + spent.system) / 1000,
            queuedInB: batcherB.stats().queued,
          });
        });
      }
      void request;
      return new Promise<InferResponse>((_resolve, reject) => heldOnB.push({ reject }));
    },
    stream: () => {
      throw new Error('no streams here');
    },
  };
  const batcherA = createMicroBatcher(a, batcherOptions);
  const batcherB = createMicroBatcher(b, batcherOptions);
  const router = createRouter({
    targets: [
      { name: 'a', transport: batcherA },
      { name: 'b', transport: batcherB },
    ],
  });
  const pending = Array.from({ length: calls }, (_, id) =>
    router
      .infer(
        buildInferRequest('chaos_gpu', [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4).fill(id) },
        ]),
        {},
      )
      .catch(() => undefined),
  );
  await new Promise((resolve) => setImmediate(resolve));
  // The connection is lost: every batch in flight on a fails at once; later sends are refused.
  dead = true;
  lostAt = performance.now();
  for (const call of inFlightOnA.splice(0)) call.reject(unavailable());
  for (const listener of watchers) listener({ from: 'ready', to: 'idle', callsLost: true });
  // Bounded: a trial in which no call reaches b (a lost call) fails the run instead of hanging it.
  let bound: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    measured,
    new Promise<never>((_resolve, reject) => {
      bound = setTimeout(
        () => reject(new Error(`no call of ${calls} reached b within 10 s of a's connection loss`)),
        10_000,
      );
    }),
  ]).finally(() => clearTimeout(bound));
  const toB = firstToB - lostAt;
  await router.close();
  for (const call of heldOnB.splice(0)) call.reject(unavailable());
  await Promise.all([batcherA.close(), batcherB.close()]);
  await Promise.all(pending);
  return { toB, ...result, batchesToB };
}

for (let i = 0; i < warmups; i++) await trial();
const results: Trial[] = [];
for (let i = 0; i < trials; i++) results.push(await trial());
const fmt = (key: keyof Trial) => {
  const values = results.map((result) => result[key]);
  return `${median(values).toFixed(3)} (min ${Math.min(...values).toFixed(3)})`;
};
console.log(
  `${calls} calls on a, ${trials} trials, load ${loadavg()
    .map((value) => value.toFixed(1))
    .join(
      ' ',
    )}: lost → first call handed to b ${fmt('toB')} ms; rest of that turn ${fmt('rest')} ms, CPU ${fmt('restCpu')} ms; calls waiting in b's batcher then ${fmt('queuedInB')}, batches handed to b ${fmt('batchesToB')}`,
);
