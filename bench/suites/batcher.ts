// Suite `batcher`: the micro-batcher against the reference server's `simulated_gpu` (one FIFO
// execution slot costing baseMs + perRowMs·rows), arms unbatched (client direct), fixed-delay and
// adaptive, at closed-loop concurrency 1/8/64/256 and open-loop Poisson arrivals, plus an overload run
// at ~4× capacity with a bounded queue. `--triton-url host:port` adds the closed and open loops against real
// Triton's `add_sub`.
//   pnpm bench batcher [--triton-url 127.0.0.1:8001] [--seconds 1]
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMicroBatcher, type MicroBatcher, type MicroBatcherOptions } from '@infergate/batcher';
import { createTritonClient, type InputTensor, type TritonClient } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { type BenchCase, flag, packageVersion, percentile, report, round } from '../lib.js';

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
  latencies: number[];
  items: number;
  seconds: number;
  rejections: number;
  rows: number;
  batches: number;
}

const GPU = { baseMs: 2, perRowMs: 0.05 };

/** Heap used after a full GC, in MiB (gc exposed at run time, so no node flag is needed). */
function heapAfterGcMiB(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return round(process.memoryUsage().heapUsed / 2 ** 20, 1);
}
const costMs = (rows: number) => GPU.baseMs + GPU.perRowMs * rows;

function emptySample(): Sample {
  return { latencies: [], items: 0, seconds: 0, rejections: 0, rows: 0, batches: 0 };
}

async function makeArm(name: ArmName, url: string, options: MicroBatcherOptions = {}): Promise<Arm> {
  if (name === 'unbatched') {
    return {
      name,
      client: createTritonClient({ url, enableGpuIpc: false }),
      batcher: undefined,
      base: undefined,
    };
  }
  const base = createTritonClient({ url, enableGpuIpc: false });
  const batcher = createMicroBatcher(base.grpc, { client: base, flush: name, ...options });
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

/** c workers, each calling back to back for `seconds`. */
async function closedLoop(arm: Arm, target: Target, concurrency: number, seconds: number, sample: Sample) {
  await withStats(arm, sample, async () => {
    const started = performance.now();
    const stopAt = started + seconds * 1000;
    let seed = 0;
    const worker = async () => {
      while (performance.now() < stopAt) {
        const sent = performance.now();
        await arm.client.infer(target.model, target.inputs(seed++));
        sample.latencies.push(performance.now() - sent);
        sample.items += 1;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    sample.seconds += (performance.now() - started) / 1000;
  });
}

/**
 * Poisson arrivals at `rate`/s for `seconds`; latency counts from the scheduled send time (no
 * coordinated omission). QUEUE_FULL answers are counted, not timed.
 */
async function openLoop(arm: Arm, target: Target, rate: number, seconds: number, sample: Sample) {
  await withStats(arm, sample, async () => {
    const started = performance.now();
    const end = started + seconds * 1000;
    const pending: Promise<void>[] = [];
    let next = started;
    let seed = 0;
    while (next < end) {
      const now = performance.now();
      while (next <= now && next < end) {
        const scheduled = next;
        next += (-Math.log(1 - Math.random()) / rate) * 1000;
        pending.push(
          arm.client.infer(target.model, target.inputs(seed++)).then(
            () => {
              sample.latencies.push(performance.now() - scheduled);
              sample.items += 1;
            },
            (error: { code?: string }) => {
              if (error.code !== 'QUEUE_FULL') throw error;
              sample.rejections += 1;
            },
          ),
        );
      }
      if (pending.length > 4096)
        pending.splice(
          0,
          pending.length,
          Promise.all(pending).then(() => {}),
        );
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(pending);
    sample.seconds += (performance.now() - started) / 1000;
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
      ...extra,
    },
  };
}

async function runTarget(target: Target, seconds: number, cases: BenchCase[], loads: readonly number[]) {
  const names: ArmName[] = ['unbatched', 'fixed', 'adaptive'];
  const arms = await Promise.all(names.map((name) => makeArm(name, target.url)));
  const results = new Map<string, Sample>();
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
    // c1: arms alternate call by call, so drift hits them alike.
    const c1Until = performance.now() + seconds * 3000;
    let seed = 0;
    while (performance.now() < c1Until) {
      for (const arm of arms) {
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
    // Higher concurrency: A B C time slices, three rounds.
    for (const concurrency of loads.filter((load) => load > 1)) {
      for (let round = 0; round < 3; round++) {
        for (const arm of arms) {
          await closedLoop(arm, target, concurrency, seconds, sampleOf(arm.name, `c${concurrency}`));
        }
      }
    }
    for (const [key, sample] of results) {
      const [arm, load] = key.split(' ') as [ArmName, string];
      cases.push(toCase(arm, load, target.label, sample));
    }
    return { arms, results };
  } finally {
    await Promise.all(arms.map(closeArm));
  }
}

export async function run(): Promise<void> {
  const seconds = Number(flag('seconds') ?? 1);
  const tritonUrl = flag('triton-url');
  const server = await startTestServer({ simulatedGpu: GPU });
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
  let serverName = 'infergate-testing';
  try {
    await runTarget(simulated, seconds, cases, [1, 8, 64, 256]);
    const find = (arm: string, load: string) =>
      cases.find((entry) => entry.name === `${arm} ${load} simulated_gpu`);
    ratios.adaptive_vs_unbatched_c64 =
      (find('adaptive', 'c64')?.itemsPerSec as number) / (find('unbatched', 'c64')?.itemsPerSec as number);
    ratios.adaptive_added_p50_ms_c1 =
      (find('adaptive', 'c1')?.p50Ms as number) - (find('unbatched', 'c1')?.p50Ms as number);

    // Open loop at 60 % of the unbatched arm's capacity: every arm keeps up; latency differs.
    const rate = 0.6 * (1000 / costMs(1));
    const openArms = await Promise.all(
      (['unbatched', 'fixed', 'adaptive'] as const).map((name) => makeArm(name, server.url)),
    );
    const openSamples = openArms.map(() => emptySample());
    try {
      for (let round = 0; round < 3; round++) {
        for (const [index, arm] of openArms.entries()) {
          await openLoop(arm, simulated, rate, seconds, openSamples[index] as ReturnType<typeof emptySample>);
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

    // Overload: ~4× what adaptive can serve with 8-row batches, queue bounded to two batches.
    const batchRows = 8;
    let capacity = (batchRows / costMs(batchRows)) * 1000;
    const maxQueueDelayMs = 10;
    const overload = await makeArm('adaptive', server.url, {
      maxBatchSize: batchRows,
      maxQueueSize: 2 * batchRows,
      maxQueueDelayMs,
    });
    const overloadSample = emptySample();
    const heapMiB: number[] = [heapAfterGcMiB()];
    try {
      // Warm-up that also measures the capacity: the server's timers make executions a little
      // shorter than baseMs + perRowMs·rows, so the nominal figure would understate it.
      const probe = emptySample();
      await closedLoop(overload, simulated, 2 + 2 * batchRows, seconds, probe); // saturates, queue stays in bounds
      capacity = Math.max(capacity, probe.items / probe.seconds);
      heapMiB.push(heapAfterGcMiB());
      for (let part = 0; part < 2; part++) {
        await openLoop(overload, simulated, 4 * capacity, 2 * seconds, overloadSample);
        heapMiB.push(heapAfterGcMiB());
      }
    } finally {
      await closeArm(overload);
    }
    const bound = maxQueueDelayMs + 2 * costMs(batchRows);
    const overloadCase = toCase(
      'adaptive',
      `overload${Math.round(4 * capacity)}`,
      'simulated_gpu',
      overloadSample,
      {
        offeredPerSec: round(4 * capacity, 0),
        capacityPerSec: round(capacity, 0),
        boundMs: bound,
        maxQueueSize: 2 * batchRows,
        // After a full GC: before the warm-up, after it, and after each half of the measured run.
        heapUsedAfterGcMiB: heapMiB,
      },
    );
    cases.push(overloadCase);
    ratios.overload_p99_over_bound = (overloadCase.p99Ms as number) / bound;

    if (tritonUrl !== undefined) {
      const triton = createTritonClient({ url: tritonUrl, enableGpuIpc: false });
      serverName = `${serverName}; ${(await triton.serverMetadata()).version}`;
      await triton.close();
      const addSub: Target = {
        label: 'triton add_sub',
        url: tritonUrl,
        model: 'add_sub',
        inputs: (seed) => [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(seed) },
          { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(1) },
        ],
      };
      await runTarget(addSub, seconds, cases, [1, 8, 64, 256]);
      // Open loop at 60 % of the unbatched arm's c1 rate, as for simulated_gpu.
      const c1 = cases.find((entry) => entry.name === 'unbatched c1 triton add_sub')?.itemsPerSec ?? 100;
      const tritonRate = 0.6 * c1;
      const tritonArms = await Promise.all(
        (['unbatched', 'fixed', 'adaptive'] as const).map((name) => makeArm(name, tritonUrl)),
      );
      const tritonSamples = tritonArms.map(() => emptySample());
      try {
        for (let round = 0; round < 3; round++) {
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
        adaptive_added_p50_ms_c1: '<= 0.3',
        overload_p99_over_bound: '<= 1',
      },
      command: `pnpm bench batcher${tritonUrl ? ` --triton-url ${tritonUrl}` : ''}${flag('seconds') ? ` --seconds ${seconds}` : ''}`,
    });
    console.table(
      cases.map((entry) => ({
        case: entry.name,
        batch: entry.extra?.meanBatchSize,
        rejected: entry.extra?.rejections,
      })),
    );
  } finally {
    await server.stop();
  }
}
