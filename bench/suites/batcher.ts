// Suite `batcher`: the micro-batcher against the reference server's `simulated_gpu` (one FIFO
// execution slot costing baseMs + perRowMs·rows; the server in its own process, so the figures
// measure the client, or with --in-process in this one), arms unbatched (client direct), fixed-delay and
// adaptive, at closed-loop concurrency 1/8/64/256 and open-loop Poisson arrivals, plus an overload run
// at ~4× the measured capacity with a bounded queue. The same loads against real Triton's `add_sub`
// (PyTriton, dynamic batching): started from the interop venv when it exists, or given with
// --triton-url. Load generation and latency are `infergate perf`'s (packages/cli/src/perf).
//   pnpm bench batcher [--quick] [--seconds 1] [--triton-url 127.0.0.1:8001 | --no-triton] [--in-process]
import { existsSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMicroBatcher, type MicroBatcher, type MicroBatcherOptions } from '@infergate/batcher';
import {
  createTritonClient,
  type InferTransport,
  type InputTensor,
  type TritonClient,
} from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { closedLoopWindow, rateWindow } from '../../packages/cli/src/perf/load-window.js';
import { startTriton, type TritonHandle, VENV_PYTHON } from '../../test/interop/triton-harness.js';
import { barChartSvg } from '../bar-chart.js';
import { BENCH_DIR, type BenchCase, flag, packageVersion, percentile, report, round } from '../lib.js';
import { OverloadProbe } from '../overload-probe.js';
import { startServerProcess } from '../server-process.js';

type ArmName = 'unbatched' | 'fixed' | 'adaptive';

interface Arm {
  name: ArmName;
  client: TritonClient;
  batcher: MicroBatcher | undefined;
  base: TritonClient | undefined;
}

interface Target {
  label: string;
  url: string;
  model: string;
  inputs: (seed: number) => InputTensor[];
}

interface Sample {
  /** From the scheduled send time (open loop) or the send (closed loop), ms. */
  latencies: number[];
  /** Open loop: from the moment the call was actually made, ms (the generator's own lag left out). */
  fromSend: number[];
  items: number;
  seconds: number;
  rejections: number;
  rows: number;
  batches: number;
  /** The model's executions and compute time (ms) over the closed-loop windows (statistics RPC). */
  executions: number;
  computeMs: number;
}

/** `simulated_gpu`'s costs: the reference server's defaults (what `infergate serve-test` serves). */
const GPU = { baseMs: 2, perRowMs: 0.05 };

/**
 * The reference server: in its own process (`infergate serve-test`), as the unary suite does, so
 * that its work does not share the client's event loop; `--in-process` runs it in this one.
 */
async function referenceServer(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.argv.includes('--in-process')) return startTestServer({ simulatedGpu: GPU });
  const { url, child } = await startServerProcess();
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Heap used after a full GC, in MiB (gc exposed at run time, so no node flag is needed). */
function heapAfterGcMiB(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return round(process.memoryUsage().heapUsed / 2 ** 20, 1);
}
const costMs = (rows: number) => GPU.baseMs + GPU.perRowMs * rows;

function emptySample(): Sample {
  return {
    latencies: [],
    fromSend: [],
    items: 0,
    seconds: 0,
    rejections: 0,
    rows: 0,
    batches: 0,
    executions: 0,
    computeMs: 0,
  };
}

async function makeArm(
  name: ArmName,
  url: string,
  options: MicroBatcherOptions = {},
  wrap: (transport: InferTransport) => InferTransport = (transport) => transport,
): Promise<Arm> {
  if (name === 'unbatched') {
    return {
      name,
      client: createTritonClient({ url, enableGpuIpc: false }),
      batcher: undefined,
      base: undefined,
    };
  }
  const base = createTritonClient({ url, enableGpuIpc: false });
  const batcher = createMicroBatcher(wrap(base.grpc), { client: base, flush: name, ...options });
  const client = createTritonClient({ url, enableGpuIpc: false, transport: batcher });
  return { name, client, batcher, base };
}

async function closeArm(arm: Arm): Promise<void> {
  await arm.batcher?.close();
  await arm.client.close();
  await arm.base?.close();
}

/** Adds the batcher's rows/batches over `run` to the sample. */
async function withStats(arm: Arm, sample: Sample, run: () => Promise<void>): Promise<void> {
  const before = arm.batcher?.stats();
  await run();
  const after = arm.batcher?.stats();
  if (before !== undefined && after !== undefined) {
    sample.rows += after.rows - before.rows;
    sample.batches += after.batches - before.batches;
  }
}

/** The model's execution count and compute time (ms) so far, from the statistics RPC. */
async function modelCounters(client: TritonClient, model: string) {
  const [stats] = await client.modelStatistics(model);
  return {
    executions: stats?.executionCount ?? 0,
    computeMs: stats === undefined ? 0 : Number(stats.inference.computeInfer.ns) / 1e6,
  };
}

/**
 * c workers, each calling back to back for `seconds` (perf's closed-loop window). With `stats`, the
 * model's executions and compute time over the window are added to the sample (the per-cycle
 * breakdown: cycle = window ÷ executions, of which the model's compute time).
 */
async function closedLoop(
  arm: Arm,
  target: Target,
  concurrency: number,
  seconds: number,
  sample: Sample,
  stats?: TritonClient,
) {
  let seed = 0;
  const before = stats === undefined ? undefined : await modelCounters(stats, target.model);
  await withStats(arm, sample, async () => {
    const window = await closedLoopWindow(
      () => arm.client.infer(target.model, target.inputs(seed++)),
      concurrency,
      seconds * 1000,
    );
    if (window.errors > 0) throw new Error(`${arm.name} c${concurrency}: ${window.firstError}`);
    for (const latency of window.latencies) sample.latencies.push(latency);
    sample.items += window.completed;
    sample.seconds += window.elapsedMs / 1000;
  });
  if (stats !== undefined && before !== undefined) {
    const after = await modelCounters(stats, target.model);
    sample.executions += after.executions - before.executions;
    sample.computeMs += after.computeMs - before.computeMs;
  }
}

/**
 * Poisson arrivals at `rate`/s for `seconds` (perf's rate window): latency counts from the scheduled
 * send time (no coordinated omission). QUEUE_FULL answers are counted, not timed; any other error
 * fails the run.
 */
async function openLoop(arm: Arm, target: Target, rate: number, seconds: number, sample: Sample) {
  let seed = 0;
  let unexpected: unknown;
  await withStats(arm, sample, async () => {
    const window = await rateWindow(
      () => {
        const sent = performance.now();
        return arm.client.infer(target.model, target.inputs(seed++)).then(
          () => {
            sample.fromSend.push(performance.now() - sent);
          },
          (error: { code?: string }) => {
            if (error.code === 'QUEUE_FULL') sample.rejections += 1;
            else unexpected ??= error;
            throw error;
          },
        );
      },
      rate,
      'poisson',
      seconds * 1000,
      1_000_000,
    );
    for (const latency of window.latencies) sample.latencies.push(latency);
    sample.items += window.completed;
    sample.seconds += window.elapsedMs / 1000;
  });
  if (unexpected !== undefined) throw unexpected;
}

/**
 * The overload arm's open loop: the probe's own generator (overload-probe.ts), whose records are
 * preallocated so that the benchmark adds as little garbage as it can to the process it measures.
 * Same arrivals and rules as `openLoop`.
 */
async function overloadLoop(
  arm: Arm,
  target: Target,
  rate: number,
  seconds: number,
  sample: Sample,
  probe: OverloadProbe,
) {
  await withStats(arm, sample, async () => {
    const window = await probe.openLoop(
      (inputs) => arm.client.infer(target.model, inputs),
      rate,
      seconds * 1000,
    );
    if (window.failed > 0) throw window.firstError;
    for (const latency of window.latencies) sample.latencies.push(latency);
    for (const latency of window.fromSend) sample.fromSend.push(latency);
    sample.rejections += window.refused;
    sample.items += window.completed;
    sample.seconds += window.elapsedMs / 1000;
  });
}

function toCase(
  arm: ArmName,
  load: string,
  label: string,
  sample: Sample,
  extra: Record<string, unknown> = {},
): BenchCase {
  const sorted = [...sample.latencies].sort((a, b) => a - b);
  return {
    name: `${arm} ${load} ${label}`,
    arm,
    load,
    itemsPerSec: sample.items / sample.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    extra: {
      meanBatchSize: sample.batches === 0 ? 1 : round(sample.rows / sample.batches, 2),
      rejections: sample.rejections,
      items: sample.items,
      // Per execution of the model: the cycle, and the model's compute time within it. (A server that
      // merges requests, like Triton's dynamic batcher, sums compute time per request: read these
      // for simulated_gpu.)
      ...(sample.executions > 0
        ? {
            cycleMs: round((sample.seconds * 1000) / sample.executions, 3),
            modelComputeMs: round(sample.computeMs / sample.executions, 3),
          }
        : {}),
      ...extra,
    },
  };
}

async function runTarget(
  target: Target,
  seconds: number,
  rounds: number,
  cases: BenchCase[],
  loads: readonly number[],
) {
  const names: ArmName[] = ['unbatched', 'fixed', 'adaptive'];
  const arms = await Promise.all(names.map((name) => makeArm(name, target.url)));
  // Reads the model's statistics around each closed-loop window (the per-cycle breakdown).
  const statsClient = createTritonClient({ url: target.url, enableGpuIpc: false });
  const results = new Map<string, Sample>();
  const policyAt = new Map<string, unknown>();
  const sampleOf = (arm: ArmName, load: string) => {
    const key = `${arm} ${load}`;
    let sample = results.get(key);
    if (sample === undefined) {
      sample = emptySample();
      results.set(key, sample);
    }
    return sample;
  };
  try {
    for (const arm of arms) await closedLoop(arm, target, 8, 0.5, emptySample()); // warm up
    // c1: arms alternate call by call, so drift hits them alike. `adaptive_added_p50_ms_c1` compares
    // the unbatched and adaptive arms' medians, so they get the samples: the fixed arm (10 ms of
    // delay per call, two thirds of the time when it took part in every round) joins one round in
    // four, and the two compared arms swap places each round (neither always follows the fixed
    // arm's long wait). About 120 samples per arm in 3 s left the difference of the two medians with
    // a standard error estimated at 0.15–0.2 ms, as large as what it measures (the night's quiet
    // runs read 0.116 / 0.166 / 0.327); 6 s this way gives each arm about 4× as many.
    const c1Until = performance.now() + seconds * 6000;
    let seed = 0;
    const [unbatchedArm, fixedArm, adaptiveArm] = arms as [Arm, Arm, Arm];
    for (let round = 0; performance.now() < c1Until; round++) {
      const order = round % 2 === 0 ? [unbatchedArm, adaptiveArm] : [adaptiveArm, unbatchedArm];
      if (round % 4 === 0) order.splice(round % 8 === 0 ? 1 : 0, 0, fixedArm);
      for (const arm of order) {
        const sample = sampleOf(arm.name, 'c1');
        await withStats(arm, sample, async () => {
          const sent = performance.now();
          await arm.client.infer(target.model, target.inputs(seed++));
          const elapsed = performance.now() - sent;
          sample.latencies.push(elapsed);
          sample.items += 1;
          sample.seconds += elapsed / 1000;
        });
      }
    }
    // Higher concurrency: A B C time slices, `rounds` rounds.
    for (const concurrency of loads.filter((load) => load > 1)) {
      for (let round = 0; round < rounds; round++) {
        for (const arm of arms) {
          await closedLoop(
            arm,
            target,
            concurrency,
            seconds,
            sampleOf(arm.name, `c${concurrency}`),
            statsClient,
          );
        }
      }
      const lane = arms.find((arm) => arm.name === 'adaptive')?.batcher?.stats().lanes[target.model];
      if (lane !== undefined) policyAt.set(`c${concurrency}`, lane);
    }
    for (const [key, sample] of results) {
      const [arm, load] = key.split(' ') as [ArmName, string];
      // The adaptive policy's state after the load's last round (mode, server verdict, learned times).
      const policy = arm === 'adaptive' ? policyAt.get(load) : undefined;
      cases.push(toCase(arm, load, target.label, sample, policy === undefined ? {} : { policy }));
    }
    return { arms, results };
  } finally {
    await Promise.all(arms.map(closeArm));
    await statsClient.close();
  }
}

/** Triton for the `add_sub` part: the given URL, else one started from the interop venv, else none. */
async function tritonFor(): Promise<{ url: string; handle?: TritonHandle } | undefined> {
  const given = flag('triton-url');
  if (given !== undefined) return { url: given };
  if (process.argv.includes('--no-triton') || !existsSync(VENV_PYTHON)) return undefined;
  const handle = await startTriton({ models: ['add_sub'], restrictedEndpoints: [] });
  return { url: handle.grpcAddress, handle };
}

export async function run(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const seconds = Number(flag('seconds') ?? (quick ? 0.5 : 1));
  const rounds = quick ? 2 : 3;
  const loads = quick ? [1, 8, 64] : [1, 8, 64, 256];
  const server = await referenceServer();
  const cases: BenchCase[] = [];
  const ratios: Record<string, number> = {};
  const simulated: Target = {
    label: 'simulated_gpu',
    url: server.url,
    model: 'simulated_gpu',
    inputs: (seed) => [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(seed) },
    ],
  };
  let serverName = process.argv.includes('--in-process')
    ? 'infergate-testing (in process)'
    : 'infergate-testing (own process)';
  let triton: Awaited<ReturnType<typeof tritonFor>>;
  try {
    await runTarget(simulated, seconds, rounds, cases, loads);
    const find = (arm: string, load: string, label = 'simulated_gpu') =>
      cases.find((entry) => entry.name === `${arm} ${load} ${label}`);
    const items = (arm: string, load: string, label?: string) =>
      find(arm, load, label)?.itemsPerSec as number;
    ratios.adaptive_vs_unbatched_c64 = items('adaptive', 'c64') / items('unbatched', 'c64');
    // Full-batch capacity: one slot running back-to-back batches of 64 rows.
    const fullBatchCapacity = (64 / costMs(64)) * 1000;
    ratios.adaptive_capacity_share_c64 = items('adaptive', 'c64') / fullBatchCapacity;
    // For context: what the fixed policy reached on this machine in the same run (its ceiling).
    ratios.fixed_capacity_share_c64 = items('fixed', 'c64') / fullBatchCapacity;
    // Where adaptive's c64 cycle goes: per execution of the model, the whole cycle and the model's
    // compute time in it (5.2 ms for 64 rows if the simulated GPU keeps time); 0.8 of capacity
    // needs a 6.5 ms cycle.
    const adaptiveC64 = find('adaptive', 'c64')?.extra;
    if (typeof adaptiveC64?.cycleMs === 'number' && typeof adaptiveC64.modelComputeMs === 'number') {
      ratios.adaptive_c64_cycle_ms = adaptiveC64.cycleMs;
      ratios.adaptive_c64_model_compute_ms = adaptiveC64.modelComputeMs;
    }
    ratios.adaptive_added_p50_ms_c1 =
      (find('adaptive', 'c1')?.p50Ms as number) - (find('unbatched', 'c1')?.p50Ms as number);

    // Open loop at 60 % of the unbatched arm's capacity: every arm keeps up; latency differs.
    const rate = 0.6 * (1000 / costMs(1));
    const openArms = await Promise.all(
      (['unbatched', 'fixed', 'adaptive'] as const).map((name) => makeArm(name, server.url)),
    );
    const openSamples = openArms.map(() => emptySample());
    try {
      for (let round = 0; round < rounds; round++) {
        for (const [index, arm] of openArms.entries()) {
          await openLoop(arm, simulated, rate, seconds, openSamples[index] as Sample);
        }
      }
    } finally {
      await Promise.all(openArms.map(closeArm));
    }
    openArms.forEach((arm, index) => {
      cases.push(
        toCase(arm.name, `poisson${Math.round(rate)}`, 'simulated_gpu', openSamples[index] as Sample),
      );
    });

    // Overload: ~4× what adaptive serves with 8-row batches on this machine, queue bounded to two
    // batches and admission by expected wait (maxQueueWaitMs = maxQueueDelayMs). The bound is
    // maxQueueDelayMs + 2 service times, the service time measured here (a slow machine adds client
    // and event-loop time to every batch, which the nominal 2 ms + 8 × 0.05 ms does not know), never
    // below the nominal one.
    const batchRows = 8;
    const maxQueueDelayMs = 10;
    const overloadOptions = { maxBatchSize: batchRows, maxQueueSize: 2 * batchRows, maxQueueDelayMs };
    const tracer = new OverloadProbe();
    const overload = await makeArm(
      'adaptive',
      server.url,
      { ...overloadOptions, maxQueueWaitMs: maxQueueDelayMs },
      (transport) => tracer.transport(transport),
    );
    const overloadSample = emptySample();
    const overloadLoad = [loadavg()[0] ?? 0];
    const statsClient = createTritonClient({ url: server.url, enableGpuIpc: false });
    const heapMiB: number[] = [heapAfterGcMiB()];
    let capacity: number;
    try {
      // Warm-up that also measures the capacity: enough closed-loop callers to keep both slots
      // busy with full batches while the queue stays within its bound (an arm without admission by
      // expected wait, which would refuse closed-loop callers).
      const probeArm = await makeArm('adaptive', server.url, overloadOptions);
      const probe = emptySample();
      try {
        await closedLoop(probeArm, simulated, 2 + 2 * batchRows, seconds, probe);
      } finally {
        await closeArm(probeArm);
      }
      capacity = probe.items / probe.seconds;
      heapMiB.push(heapAfterGcMiB());
      const before = await modelCounters(statsClient, simulated.model);
      for (let part = 0; part < 2; part++) {
        await overloadLoop(
          overload,
          simulated,
          4 * capacity,
          seconds * (quick ? 1 : 2),
          overloadSample,
          tracer,
        );
        heapMiB.push(heapAfterGcMiB());
      }
      const after = await modelCounters(statsClient, simulated.model);
      overloadSample.executions = after.executions - before.executions;
      overloadSample.computeMs = after.computeMs - before.computeMs;
    } finally {
      await closeArm(overload);
      await statsClient.close();
    }
    overloadLoad.push(loadavg()[0] ?? 0);
    const serviceMs = Math.max(costMs(batchRows), (batchRows / capacity) * 1000);
    const bound = maxQueueDelayMs + 2 * serviceMs;
    const overloadCase = toCase(
      'adaptive',
      `overload${Math.round(4 * capacity)}`,
      'simulated_gpu',
      overloadSample,
      {
        offeredPerSec: round(4 * capacity, 0),
        capacityPerSec: round(capacity, 0),
        serviceMs: round(serviceMs, 3),
        nominalServiceMs: costMs(batchRows),
        boundMs: round(bound, 3),
        maxQueueSize: 2 * batchRows,
        maxQueueWaitMs: maxQueueDelayMs,
        // After a full GC: before the warm-up, after it, and after each half of the measured run.
        heapUsedAfterGcMiB: heapMiB,
        load: overloadLoad.map((load) => round(load, 2)),
        // The slowest calls' timelines, the client's GC pauses and event-loop delay (overload-probe.ts).
        timeline: tracer.report(),
      },
    );
    cases.push(overloadCase);
    ratios.overload_p99_over_bound = (overloadCase.p99Ms as number) / bound;
    // The same calls timed from the moment each was actually made: what the batcher and server
    // added, without the open-loop generator's own lag when the process is short of CPU.
    const fromSend = [...overloadSample.fromSend].sort((a, b) => a - b);
    overloadCase.extra = {
      ...overloadCase.extra,
      fromSendP50Ms: round(percentile(fromSend, 50), 3),
      fromSendP99Ms: round(percentile(fromSend, 99), 3),
    };
    ratios.overload_p99_from_send_over_bound = percentile(fromSend, 99) / bound;

    try {
      triton = await tritonFor();
    } catch (error) {
      console.error('Triton did not start; the add_sub part is skipped:', error);
    }
    if (triton !== undefined) {
      const tritonUrl = triton.url;
      const client = createTritonClient({ url: tritonUrl, enableGpuIpc: false });
      serverName = `${serverName}; Triton ${(await client.serverMetadata()).version}`;
      await client.close();
      const addSub: Target = {
        label: 'triton add_sub',
        url: tritonUrl,
        model: 'add_sub',
        inputs: (seed) => [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(seed) },
          { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(1) },
        ],
      };
      await runTarget(addSub, seconds, rounds, cases, loads);
      ratios.adaptive_vs_fixed_triton_c64 =
        items('adaptive', 'c64', 'triton add_sub') / items('fixed', 'c64', 'triton add_sub');
      // Open loop at 60 % of the unbatched arm's c1 rate, as for simulated_gpu.
      const tritonRate = 0.6 * (items('unbatched', 'c1', 'triton add_sub') || 100);
      const tritonArms = await Promise.all(
        (['unbatched', 'fixed', 'adaptive'] as const).map((name) => makeArm(name, tritonUrl)),
      );
      const tritonSamples = tritonArms.map(() => emptySample());
      try {
        for (let round = 0; round < rounds; round++) {
          for (const [index, arm] of tritonArms.entries()) {
            await openLoop(arm, addSub, tritonRate, seconds, tritonSamples[index] as Sample);
          }
        }
      } finally {
        await Promise.all(tritonArms.map(closeArm));
      }
      tritonArms.forEach((arm, index) => {
        cases.push(
          toCase(
            arm.name,
            `poisson${Math.round(tritonRate)}`,
            'triton add_sub',
            tritonSamples[index] as Sample,
          ),
        );
      });
    }
    const given = flag('triton-url');
    report({
      suite: 'batcher',
      versions: {
        '@infergate/core': packageVersion('core'),
        '@infergate/batcher': packageVersion('batcher'),
        server: serverName,
      },
      cases,
      ratios,
      targets: {
        adaptive_vs_unbatched_c64: '>= 8',
        adaptive_capacity_share_c64: '>= 0.8',
        adaptive_c64_cycle_ms: 'report',
        adaptive_c64_model_compute_ms: 'report',
        adaptive_vs_fixed_triton_c64: '>= 0.8',
        adaptive_added_p50_ms_c1: '<= 0.3',
        overload_p99_over_bound: '<= 1',
        overload_p99_from_send_over_bound: 'report',
      },
      command: [
        'pnpm bench batcher',
        quick ? ' --quick' : '',
        given ? ` --triton-url ${given}` : '',
        triton === undefined && given === undefined ? ' --no-triton' : '',
        flag('seconds') ? ` --seconds ${seconds}` : '',
        process.argv.includes('--in-process') ? ' --in-process' : '',
      ].join(''),
    });
    const targets = ['simulated_gpu', ...(triton === undefined ? [] : ['triton add_sub'])];
    const groups = targets.flatMap((label) => loads.map((load) => [label, `c${load}`] as const));
    const svg = barChartSvg({
      title: 'batcher: closed-loop items/s by arm (log scale)',
      groups: groups.map(([label, load]) => `${label === 'simulated_gpu' ? 'sim' : 'triton'} ${load}`),
      series: (
        [
          ['unbatched', '#7f7f7f'],
          ['fixed', '#ff7f0e'],
          ['adaptive', '#1f77b4'],
        ] as const
      ).map(([arm, color]) => ({
        name: arm,
        color,
        values: groups.map(([label, load]) => find(arm, load, label)?.itemsPerSec),
      })),
      yLabel: 'items/s',
      log: true,
    });
    writeFileSync(join(BENCH_DIR, 'results', 'batcher.svg'), svg);
    console.table(
      cases.map((entry) => ({
        case: entry.name,
        batch: entry.extra?.meanBatchSize,
        rejected: entry.extra?.rejections,
      })),
    );
  } finally {
    await server.stop();
    await triton?.handle?.stop();
  }
}
