// The batcher's own client CPU per item: closed-loop callers through `MicroBatcher.infer` against
// an in-memory transport that answers each batch on the next turn of the event loop (no gRPC, no
// server), and, with --grpc, the same through gRPC against the reference server's `simulated_gpu`
// (in this process, so its CPU counts too). Prints items/s and process CPU µs per item per arm.
//   node scripts/bootstrap.mjs --dist bench/batcher-cpu.ts [--seconds 2] [--rounds 3] [--concurrency 64] [--grpc | --url host:port]
//   --flush adaptive|fixed: only that policy's arms (both by default).
//   --client: callers call a TritonClient whose transport is the batcher (as the suite's callers do)
//   instead of `MicroBatcher.infer` with a built request.
//   --compare <dir>: also runs arms from another build of @infergate/batcher (its dist/ directory,
//   copied inside packages/batcher/ so that it resolves @infergate/core), interleaved with these.
//   To compare with an older commit (then delete .dist-old):
//     git checkout <commit> -- packages/batcher/src && (cd packages/batcher && npx tsup && cp -r dist .dist-old)
//     git checkout HEAD -- packages/batcher/src && (cd packages/batcher && npx tsup)
//     node --import tsx bench/batcher-cpu.ts --compare packages/batcher/.dist-old
// For a profile: node --cpu-prof --import tsx bench/batcher-cpu.ts (from the repository root), or
//   --profile FILE: a CPU profile (node:inspector) of the adaptive arm's windows in the last round
//   only, without module loading or the other arms; read it per cycle with bench/profile-summary.mjs
//   FILE <executions>, the count the run prints.
//   --servers built,source: gRPC against `infergate serve-test` in its own process, one per entry (the
//   built CLI under node, or its source under tsx), arms interleaved; prints the server's CPU per item
//   too (/proc), the figure that shows what the server costs on a 2-core machine. An entry may name
//   the server's transport: --servers built:http2,built:lean compares the two side by side.
// Against a server (--grpc, --url or --servers) it also prints the per-cycle breakdown from the
// model's statistics: executions, the model's compute time per execution (the simulated GPU's wall
// time), the time between executions, and client and server CPU per execution. Per arm it prints the
// medians over rounds (items/s, cycle, client CPU and the client's sleeps per execution), how many
// batches carried every caller and how the last window began; with --compare, this build's arm ÷
// the other's, round by round.
// The per-member "sleep" count is the process's voluntary context switches (all its threads).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createMicroBatcher, type MicroBatcher } from '@infergate/batcher';
import {
  buildInferRequest,
  createTritonClient,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag } from './lib.js';
import { childCpuMs, startServerProcess } from './server-process.js';

const seconds = Number(flag('seconds') ?? 2);
const rounds = Number(flag('rounds') ?? 3);
const concurrency = Number(flag('concurrency') ?? 64);
const grpc = process.argv.includes('--grpc');
const viaClient = process.argv.includes('--client');

/** Answers every request with its inputs as outputs, on the next turn of the event loop. */
const memory: InferTransport = {
  infer: (request: InferRequest): Promise<InferResponse> =>
    new Promise((resolve) =>
      setImmediate(() =>
        resolve({
          model: request.model,
          modelVersion: '1',
          id: request.id ?? '',
          outputs: request.inputs.map((input) => ({ ...input, name: 'OUTPUT0' })),
          parameters: {},
        }),
      ),
    ),
  stream: () => {
    throw new Error('not used');
  },
};

const given = flag('url');
const serverKinds = (flag('servers') ?? '').split(',').filter((kind) => kind !== '');
const children = await Promise.all(
  serverKinds.map(async (kind) => {
    // `built:lean`: the built CLI serving gRPC on its `lean` transport (`--transport lean`).
    const [build, transport] = kind.split(':');
    return { kind, ...(await startServerProcess(build === 'built', transport)) };
  }),
);
const server =
  grpc && given === undefined && children.length === 0
    ? await startTestServer({ simulatedGpu: { baseMs: 2, perRowMs: 0.05 } })
    : undefined;
const serverUrl = given ?? server?.url ?? children[0]?.url;
const model = serverUrl !== undefined ? 'simulated_gpu' : 'm';
/** Where each arm sends: the one server, or each of the server processes in turn. */
const targets: { label: string; url: string | undefined; child?: (typeof children)[number]['child'] }[] =
  children.length > 0
    ? children.map(({ kind, url, child }) => ({ label: ` [${kind} server]`, url, child }))
    : [{ label: '', url: serverUrl }];
const compare = flag('compare');
const builds: [string, typeof createMicroBatcher][] = [['', createMicroBatcher]];
if (compare !== undefined) {
  const other = (await import(pathToFileURL(resolve(compare, 'index.js')).href)) as {
    createMicroBatcher: typeof createMicroBatcher;
  };
  builds.unshift([' (--compare)', other.createMicroBatcher]);
}
// --flush adaptive (or fixed): that policy's arms only.
const policies = (['fixed', 'adaptive'] as const).filter((flush) => (flag('flush') ?? flush) === flush);
const arms = policies.flatMap((flush) =>
  builds.flatMap(([label, create]) =>
    targets.map((target) => {
      const base =
        target.url === undefined ? undefined : createTritonClient({ url: target.url, enableGpuIpc: false });
      const inner = base?.grpc ?? memory;
      // Rows of each batch sent in the current window (for the count of full batches).
      const sizes: number[] = [];
      // Per batch of the current window: when it went to the transport and when its answer came back.
      const sentAt: number[] = [];
      const answeredAt: number[] = [];
      const recorded: InferTransport = {
        infer: (request, options) => {
          sizes.push(request.inputs[0]?.shape[0] ?? 0);
          const index = sentAt.push(performance.now()) - 1;
          return inner.infer(request, options).then((response) => {
            answeredAt[index] = performance.now();
            return response;
          });
        },
        stream: (request, options) => inner.stream(request, options),
      };
      const batcher: MicroBatcher = create(recorded, {
        flush,
        ...(base === undefined ? { models: { m: { maxBatchSize: 64 } } } : { client: base }),
      });
      const name = `${flush}${label}${target.label}`;
      // --client: callers go through a TritonClient whose transport is the batcher, as the suite's do.
      const front =
        viaClient && target.url !== undefined
          ? createTritonClient({ url: target.url, enableGpuIpc: false, transport: batcher })
          : undefined;
      return {
        front,
        sizes,
        sentAt,
        answeredAt,
        /** Per batch: answer → next batch sent (the client's side), and sent → answered, ms. */
        clientGaps: [] as number[],
        roundTrips: [] as number[],
        full: 0,
        sent: 0,
        /** The first batches of the last window, to show how a window starts. */
        firstSizes: [] as number[],
        name,
        base,
        batcher,
        child: target.child,
        items: 0,
        ms: 0,
        cpuUs: 0,
        serverMs: 0,
        rows: 0,
        batches: 0,
        executions: 0,
        computeMs: 0,
        userUs: 0,
        /** Per round: cycle ms and client CPU ms per execution (for medians and side-by-side ratios). */
        perRound: [] as Round[],
        flush,
        build: label,
        target: target.label,
      };
    }),
  ),
);
/** The model's execution count and compute time so far (ms), from the statistics RPC. */
async function serverCounters(base: (typeof arms)[number]['base']) {
  const [stats] = base === undefined ? [] : await base.modelStatistics(model);
  return {
    executions: stats?.executionCount ?? 0,
    computeMs: stats === undefined ? 0 : Number(stats.inference.computeInfer.ns) / 1e6,
  };
}
let seed = 0;
const call = (arm: { batcher: MicroBatcher; front: TritonClient | undefined }): Promise<unknown> => {
  const inputs = [
    { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16).fill(seed++) },
  ];
  return arm.front !== undefined
    ? arm.front.infer(model, inputs)
    : arm.batcher.infer(buildInferRequest(model, inputs));
};
for (const arm of arms) await closedLoopWindow(() => call(arm), concurrency, 1000);
const profileFile = flag('profile');
const profiler = profileFile === undefined ? undefined : new Session();
let profiledExecutions = 0;
for (let round = 0; round < rounds; round++) {
  for (const arm of arms) {
    const profiling = profiler !== undefined && round === rounds - 1 && arm === arms[arms.length - 1];
    if (profiling) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.post('Profiler.start');
    }
    arm.sizes.length = 0;
    arm.sentAt.length = 0;
    arm.answeredAt.length = 0;
    const before = arm.batcher.stats();
    const counters = await serverCounters(arm.base);
    const cpu = process.cpuUsage();
    const switches = process.resourceUsage().voluntaryContextSwitches;
    const serverCpu = arm.child === undefined ? 0 : childCpuMs(arm.child);
    const started = performance.now();
    const window = await closedLoopWindow(() => call(arm), concurrency, seconds * 1000);
    const used = process.cpuUsage(cpu);
    const sleeps = process.resourceUsage().voluntaryContextSwitches - switches;
    const elapsed = performance.now() - started;
    arm.sent += arm.sizes.length;
    arm.full += arm.sizes.filter((rows) => rows === concurrency).length;
    arm.firstSizes = arm.sizes.slice(0, 30);
    for (let index = 0; index < arm.sentAt.length; index++) {
      const answered = arm.answeredAt[index];
      if (answered === undefined) continue;
      arm.roundTrips.push(answered - (arm.sentAt[index] as number));
      const next = arm.sentAt[index + 1];
      if (next !== undefined) arm.clientGaps.push(next - answered);
    }
    if (profiling) {
      const { profile } = await profiler.post('Profiler.stop');
      profiler.disconnect();
      writeFileSync(profileFile as string, JSON.stringify(profile));
    }
    if (arm.child !== undefined) arm.serverMs += childCpuMs(arm.child) - serverCpu;
    arm.ms += elapsed;
    arm.cpuUs += used.user + used.system;
    arm.userUs += used.user;
    arm.items += window.completed;
    const after = arm.batcher.stats();
    const countersAfter = await serverCounters(arm.base);
    const executions = countersAfter.executions - counters.executions;
    arm.executions += executions;
    if (executions > 0) {
      arm.perRound.push({
        itemsPerSec: (window.completed / elapsed) * 1000,
        cycleMs: elapsed / executions,
        cpuMs: (used.user + used.system) / 1000 / executions,
        sleeps: sleeps / executions,
      });
    }
    if (profiling) profiledExecutions = countersAfter.executions - counters.executions;
    arm.computeMs += countersAfter.computeMs - counters.computeMs;
    arm.rows += after.rows - before.rows;
    arm.batches += after.batches - before.batches;
  }
}
for (const arm of arms) {
  console.log(
    `${arm.name.padEnd(21)} c${concurrency} ${serverUrl === undefined ? 'in-memory' : `grpc simulated_gpu (server ${given !== undefined ? 'at --url' : children.length > 0 ? 'in its own process' : 'in this process'})`}: ` +
      `${((arm.items / arm.ms) * 1000).toFixed(0)} items/s, ${(arm.cpuUs / arm.items).toFixed(2)} µs CPU/item, ` +
      (arm.child === undefined
        ? ''
        : `server ${((arm.serverMs * 1000) / arm.items).toFixed(2)} µs CPU/item, `) +
      `mean batch ${(arm.rows / arm.batches).toFixed(1)}`,
  );
  if (arm.executions > 0) {
    const cycle = arm.ms / arm.executions;
    const compute = arm.computeMs / arm.executions;
    console.log(
      `  per execution: cycle ${cycle.toFixed(3)} ms = model compute ${compute.toFixed(3)} ms + between ${(cycle - compute).toFixed(3)} ms; ` +
        `client CPU ${(arm.cpuUs / 1000 / arm.executions).toFixed(3)} ms (user ${(arm.userUs / 1000 / arm.executions).toFixed(3)})` +
        (arm.child === undefined ? '' : `, server CPU ${(arm.serverMs / arm.executions).toFixed(3)} ms`) +
        `; ${(arm.rows / arm.executions).toFixed(1)} rows per execution`,
    );
  }
  await arm.front?.close();
  await arm.batcher.close();
  await arm.base?.close();
}
interface Round {
  itemsPerSec: number;
  /** Times the client's main thread went to sleep (voluntary context switches), per execution. */
  sleeps: number;
  cycleMs: number;
  cpuMs: number;
}
const middle = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[half] as number)
    : ((sorted[half - 1] as number) + (sorted[half] as number)) / 2;
};
for (const arm of arms) {
  if (arm.perRound.length === 0) continue;
  console.log(
    `${arm.name}: median of ${arm.perRound.length} rounds: ${middle(arm.perRound.map((r) => r.itemsPerSec)).toFixed(0)} items/s, cycle ${middle(arm.perRound.map((r) => r.cycleMs)).toFixed(3)} ms, ` +
      `client CPU ${middle(arm.perRound.map((r) => r.cpuMs)).toFixed(3)} ms and ${middle(arm.perRound.map((r) => r.sleeps)).toFixed(2)} sleeps (voluntary context switches) per execution`,
  );
  const pct = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN).toFixed(
      3,
    );
  };
  console.log(
    `  per batch: answer → next batch sent p10/p50/p90 ${pct(arm.clientGaps, 10)}/${pct(arm.clientGaps, 50)}/${pct(arm.clientGaps, 90)} ms; ` +
      `sent → answered ${pct(arm.roundTrips, 10)}/${pct(arm.roundTrips, 50)}/${pct(arm.roundTrips, 90)} ms`,
  );
  console.log(
    `  batches of all ${concurrency} callers: ${arm.full} of ${arm.sent}; the last window's first batches: ${arm.firstSizes.join(',')}`,
  );
  // Side by side: this build's arm ÷ the --compare build's, round by round (the same machine load).
  const other = arms.find(
    (candidate) => candidate.build !== '' && candidate.flush === arm.flush && candidate.target === arm.target,
  );
  if (arm.build !== '' || other === undefined) continue;
  const rounds = Math.min(arm.perRound.length, other.perRound.length);
  const ratio = (pick: (round: Round) => number) =>
    middle(
      Array.from(
        { length: rounds },
        (_, index) => pick(arm.perRound[index] as Round) / pick(other.perRound[index] as Round),
      ),
    );
  console.log(
    `  ${arm.name} ÷ ${other.name}, median of ${rounds} per-round ratios: items/s ${ratio((r) => r.itemsPerSec).toFixed(3)}, cycle ${ratio((r) => r.cycleMs).toFixed(3)}, client CPU per execution ${ratio((r) => r.cpuMs).toFixed(3)}`,
  );
}
if (profileFile !== undefined) {
  console.log(
    `profile of ${arms[arms.length - 1]?.name}, last round: ${profileFile}, ${profiledExecutions} executions`,
  );
}
await server?.stop();
for (const { child } of children) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
