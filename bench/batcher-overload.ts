// The batcher suite's overload arm on its own, with each batch's round trip recorded: `simulated_gpu`
// in its own process (the built CLI), adaptive batches of 8, `maxQueueSize` 16, admission by
// expected wait (`maxQueueWaitMs` 10), Poisson arrivals at 4× the capacity a closed-loop probe
// measured, latency from the scheduled send time; the bound is the suite's (maxQueueDelayMs + 2
// service times, the service time measured). With --compare <dir>[,<dir>…], other builds of
// @infergate/batcher run in the same rounds, the arms' order rotating each round (see
// bench/batcher-cpu.ts for how to build one); --one-slot adds this build with one batch in flight
// (its maxQueueWaitMs --one-slot-wait, 10 by default; the bound stays the suite's).
// Per arm: items/s answered (goodput), calls refused and their share of the calls made, p50/p99
// from the scheduled time and the p99 over the bound, from the call (send), and the timeline.
//   node scripts/bootstrap.mjs --dist bench/batcher-overload.ts [--seconds 2] [--rounds 3] [--compare <dir>] [--one-slot [--one-slot-wait 10]] [--trace-gc]
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { createMicroBatcher, type MicroBatcher } from '@infergate/batcher';
import {
  createTritonClient,
  type InferTransport,
  type InputTensor,
  type TritonClient,
} from '@infergate/core';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag, percentile } from './lib.js';
import { OverloadProbe } from './overload-probe.js';
import { startServerProcess } from './server-process.js';

// --v8-flags '<flags>': V8 flags for this (the client's) process only, set before anything runs
// (e.g. '--single-threaded-gc', to see what the parallel scavenger's helper threads cost).
const v8Flags = flag('v8-flags');
if (v8Flags !== undefined) setFlagsFromString(v8Flags);
const seconds = Number(flag('seconds') ?? 2);
const rounds = Number(flag('rounds') ?? 3);
const compare = flag('compare');
const { url, child } = await startServerProcess();
const p = (values: number[], at: number) =>
  percentile(
    [...values].sort((a, b) => a - b),
    at,
  );
const inputs = (): InputTensor[] => [
  { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) },
];
type Create = typeof createMicroBatcher;
const options = { maxBatchSize: 8, maxQueueSize: 16, maxQueueDelayMs: 10, flush: 'adaptive' as const };

interface Arm {
  name: string;
  client: TritonClient;
  base: TritonClient;
  batcher: MicroBatcher;
  roundTrips: number[];
  latencies: number[];
  fromSend: number[];
  completed: number;
  refused: number;
  ms: number;
  probe: OverloadProbe;
  computeMs: number;
  executions: number;
}

function arm(name: string, create: Create, maxQueueWaitMs: number | undefined, slots = 2): Arm {
  const base = createTritonClient({ url, enableGpuIpc: false });
  const roundTrips: number[] = [];
  const probe = new OverloadProbe();
  const timed: InferTransport = {
    infer: (request, callOptions) => {
      const sent = performance.now();
      return base.grpc.infer(request, callOptions).finally(() => roundTrips.push(performance.now() - sent));
    },
    stream: (request, callOptions) => base.grpc.stream(request, callOptions),
  };
  const batcher = create(probe.transport(timed), {
    ...options,
    maxInFlightBatches: slots,
    client: base,
    ...(maxQueueWaitMs === undefined ? {} : { maxQueueWaitMs }),
  });
  const client = createTritonClient({ url, enableGpuIpc: false, transport: batcher });
  return {
    name,
    client,
    base,
    batcher,
    roundTrips,
    latencies: [],
    fromSend: [],
    completed: 0,
    refused: 0,
    ms: 0,
    probe,
    computeMs: 0,
    executions: 0,
  };
}

const builds: [string, Create][] = [['adaptive', createMicroBatcher]];
for (const dir of compare?.split(',') ?? []) {
  const other = (await import(pathToFileURL(resolve(dir, 'index.js')).href)) as {
    createMicroBatcher: Create;
  };
  builds.push([`adaptive (${dir.split('/').at(-1)})`, other.createMicroBatcher]);
}
// Capacity: enough closed-loop callers to keep both slots busy with full batches (no wait admission).
const probe = arm('probe', createMicroBatcher, undefined);
const call = (target: Arm) => () => target.client.infer('simulated_gpu', inputs()).then(() => {});
await closedLoopWindow(call(probe), 18, 1000);
const window = await closedLoopWindow(call(probe), 18, seconds * 1000);
const capacity = (window.completed / window.elapsedMs) * 1000;
const serviceMs = Math.max(2.4, (8 / capacity) * 1000);
const bound = 10 + 2 * serviceMs;
console.log(
  `capacity ${capacity.toFixed(0)}/s, service ${serviceMs.toFixed(2)} ms, bound ${bound.toFixed(2)} ms; ` +
    `probe round trip p50 ${p(probe.roundTrips, 50).toFixed(2)} p99 ${p(probe.roundTrips, 99).toFixed(2)} ms`,
);
const arms = builds.map(([name, create]) => arm(name, create, 10));
// --one-slot: this build once more with one batch in flight (what the lane's depth costs and buys).
if (process.argv.includes('--one-slot'))
  arms.push(arm('adaptive (one slot)', createMicroBatcher, Number(flag('one-slot-wait') ?? 10), 1));
const loads = [loadavg()[0] ?? 0];
const counters = async () => {
  const [stats] = await probe.base.modelStatistics('simulated_gpu');
  return {
    executions: stats?.executionCount ?? 0,
    computeMs: stats === undefined ? 0 : Number(stats.inference.computeInfer.ns) / 1e6,
  };
};
// --trace-gc: V8 prints one line per GC of this process (not the server's) during the measured
// rounds (--trace-gc-nvp: pause, kind, bytes allocated since the last GC, promoted, survived, the
// parallel scavenge's share); bench/gc-trace-summary.ts reads them from the saved output.
const traceGc = process.argv.includes('--trace-gc');
if (traceGc) setFlagsFromString('--trace-gc-nvp');
for (let round = 0; round < rounds; round++) {
  // The arms' order rotates each round, so that none always follows the same one.
  const order = [...arms.slice(round % arms.length), ...arms.slice(0, round % arms.length)];
  for (const target of order) {
    const before = await counters();
    const measured = await target.probe.openLoop(
      (inputs) => target.client.infer('simulated_gpu', inputs),
      4 * capacity,
      seconds * 1000,
    );
    if (measured.failed > 0) throw measured.firstError;
    target.refused += measured.refused;
    for (const latency of measured.fromSend) target.fromSend.push(latency);
    const after = await counters();
    target.executions += after.executions - before.executions;
    target.computeMs += after.computeMs - before.computeMs;
    for (const latency of measured.latencies) target.latencies.push(latency);
    target.completed += measured.completed;
    target.ms += measured.elapsedMs;
  }
}
if (traceGc) setFlagsFromString('--no-trace-gc-nvp');
for (const target of [...arms, probe]) {
  const stats = target.batcher.stats();
  if (target !== probe) {
    const p99 = p(target.latencies, 99);
    console.log(
      `${target.name.padEnd(21)} ${((target.completed / target.ms) * 1000).toFixed(0)}/s, ${target.refused} refused ` +
        `(${((100 * target.refused) / Math.max(1, target.refused + target.completed)).toFixed(1)} %), ` +
        `p50 ${p(target.latencies, 50).toFixed(2)} p99 ${p99.toFixed(2)} ms (÷ bound ${(p99 / bound).toFixed(3)}), ` +
        `from send p99 ÷ bound ${(p(target.fromSend, 99) / bound).toFixed(3)}; batch round trip p50 ` +
        `${p(target.roundTrips, 50).toFixed(2)} p90 ${p(target.roundTrips, 90).toFixed(2)} p99 ` +
        `${p(target.roundTrips, 99).toFixed(2)} ms; mean batch ${stats.meanBatchSize.toFixed(2)}; ` +
        `policy ${JSON.stringify(stats.lanes.simulated_gpu)}`,
    );
    console.log(
      `  timeline (ms) ${JSON.stringify(
        target.probe.report({
          computePerExecutionMs: Number((target.computeMs / Math.max(1, target.executions)).toFixed(3)),
        }),
      )}`,
    );
  }
  await target.batcher.close();
  await target.client.close();
  await target.base.close();
}
loads.push(loadavg()[0] ?? 0);
console.log(`load (1-min) ${loads.map((load) => load.toFixed(2)).join(' → ')}`);
const exited = new Promise((done) => child.once('exit', done));
child.kill('SIGTERM');
await exited;
