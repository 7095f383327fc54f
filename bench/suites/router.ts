// Suite `router`: (1) the router's overhead at concurrency 64 against a healthy reference server
// (identity) in its own process, routed vs the same GrpcTransport called directly, interleaved
// A B / B A after a warm-up (and, for information, the same against a server in this process); (2) failover:
// two reference servers in child processes (`simulated_gpu` economics, 40 ms + 0.1 ms/row), a
// micro-batcher under each target, the primary killed with kill -9 — calls lost in a burst of
// 2,000, and in an open loop the gap from the kill to the first success on the survivor (with where
// it goes: connection lost, target ejected, first call sent to b, b's answer) and the p99 of the
// second after the kill over the second before it.
// The reference servers run as a user's would: plain Node on the built packages when this run is on
// them (`pnpm bench`), else from the sources under tsx; `--servers source|built` picks one.
//   pnpm bench router [--reps 8] [--sliceMs 1000] [--failovers 3] [--rate 400] [--only open|burst|overhead|hedge]
//                     [--servers source|built] [--warmB N]
// `--warmB N` (a diagnostic, with `--only open`; never the named figure): b's server answers N
// identity calls from a client of their own before the open loop, so its request path is compiled
// rather than run once: how much of the gap is the reference server's code being cold. (b's
// `headers in` instant is then off: the fixture pairs arrivals with executions of any model.)
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { buildInferRequest, createTritonClient, type InferTransport } from '@infergate/core';
import { createRouter } from '@infergate/router';
import { startTestServer } from '@infergate/testing';
import { type CallOutcome, startChaosRig, tally } from '../../test/chaos/chaos-rig.js';
import { type ServerProcess, startServerProcess, toPerformanceNow } from '../../test/chaos/server-process.js';
import { type BenchCase, closedLoop, flag, median, packageVersion, percentile, report } from '../lib.js';
import { hedging, routerStrategies } from '../router-strategies.js';
import { childCpuMs, startServerProcess as startReferenceServer } from '../server-process.js';

const CONCURRENCY = 64;
const request = buildInferRequest('identity', [
  { name: 'INPUT0', datatype: 'FP32', shape: [16], data: new Float32Array(16) },
]);

/** Closed loop at `CONCURRENCY` for `ms`, with this process's CPU per call (µs, user + system). */
async function slice(transport: InferTransport, ms: number) {
  const cpu = process.cpuUsage();
  const result = await closedLoop(transport, request, CONCURRENCY, ms);
  const used = process.cpuUsage(cpu);
  return { ...result, cpuUsPerCall: (used.user + used.system) / result.latencies.length };
}

type Arm = 'direct' | 'router';

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * `reps` rounds of one `sliceMs` slice per arm — the gRPC transport called directly, and the same
 * transport through `createRouter` with one target — after a warm-up of both, the arms' order
 * rotated each round (A B, then B A: whichever arm runs second inherits the first one's garbage).
 */
async function sideBySide(url: string, reps: number, sliceMs: number, serverCpuMs?: () => number) {
  const client = createTritonClient({ url, enableGpuIpc: false });
  const router = createRouter({ targets: [{ name: 'only', transport: client.grpc }] });
  const order: (readonly [Arm, InferTransport])[] = [
    ['direct', client.grpc],
    ['router', router],
  ];
  try {
    for (const [, transport] of order) await slice(transport, 1000); // warm up both paths
    const perSec = { direct: [] as number[], router: [] as number[] };
    const cpu = { direct: [] as number[], router: [] as number[] };
    const serverCpu = { direct: [] as number[], router: [] as number[] };
    const latencies = { direct: [] as number[], router: [] as number[] };
    for (let rep = 0; rep < reps; rep++) {
      for (const [arm, transport] of rep % 2 === 0 ? order : [...order].reverse()) {
        const serverBefore = serverCpuMs?.() ?? Number.NaN;
        const result = await slice(transport, sliceMs);
        perSec[arm].push(result.perSec);
        cpu[arm].push(result.cpuUsPerCall);
        serverCpu[arm].push(
          (((serverCpuMs?.() ?? Number.NaN) - serverBefore) * 1000) / result.latencies.length,
        );
        latencies[arm].push(...result.latencies);
      }
    }
    // Each arm's mean items/s over its slices (equal lengths: its calls over its time), router ÷
    // direct. A slice scatters by 10–30 % on a shared machine, from one round to the next without
    // memory: of the estimators tried on the same slices the mean scattered least (bootstrap spread
    // 0.06 at load 6–9, against 0.08 for the median of the rounds' ratios and 0.10 for the ratio of
    // the medians, used until 2026-12-02); those two are kept for comparison.
    const perRound = perSec.router.map((routed, round) => routed / (perSec.direct[round] as number));
    return {
      perSec,
      cpu,
      serverCpu,
      latencies,
      perRound,
      ratio: mean(perSec.router) / mean(perSec.direct),
      ratioOfMedians: median(perSec.router) / median(perSec.direct),
      medianOfRounds: median(perRound),
    };
  } finally {
    await router.close();
    await client.close();
  }
}

/**
 * The router's overhead: closed loop at 64 on `identity` FP32 [16], routed ÷ direct. The reference
 * server runs in its own process (its CLI, as the benchmarks' method says: a server in this process
 * shares the event loop, and its cost then hides or, as it gets cheaper, magnifies the client's).
 * The same comparison against a server in this process (`startTestServer()`, how this case was
 * measured until 2026-12-01) is kept in the router case's `extra.inProcess`, for information.
 */
export async function overhead(reps: number, sliceMs: number, cases: BenchCase[]): Promise<number> {
  const server = await startReferenceServer();
  let measured: Awaited<ReturnType<typeof sideBySide>>;
  try {
    // Four times the rounds of a quarter of the slices (the same time): a slice's items/s scatters
    // as much at 0.25 s as at 0.5 s, so more slices, not longer ones, steady the arms' means.
    measured = await sideBySide(server.url, reps * 4, sliceMs / 4, () => childCpuMs(server.child));
  } finally {
    server.child.kill('SIGTERM');
  }
  const local = await startTestServer();
  let inProcess: Awaited<ReturnType<typeof sideBySide>>;
  try {
    inProcess = await sideBySide(local.url, Math.max(2, Math.ceil(reps / 2)), sliceMs);
  } finally {
    await local.stop();
  }
  for (const arm of ['direct', 'router'] as const) {
    const sorted = measured.latencies[arm].sort((a, b) => a - b);
    cases.push({
      name: `${arm} c64 identity`,
      arm,
      load: 'c64',
      itemsPerSec: mean(measured.perSec[arm]),
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      extra: {
        server: 'own process (infergate serve-test)',
        perSliceItemsPerSec: measured.perSec[arm],
        medianItemsPerSec: median(measured.perSec[arm]),
        ...(arm === 'router'
          ? {
              perRoundRatios: measured.perRound,
              ratioOfMedians: measured.ratioOfMedians,
              medianOfRoundRatios: measured.medianOfRounds,
            }
          : {}),
        clientCpuUsPerCall: median(measured.cpu[arm]),
        serverCpuUsPerCall: median(measured.serverCpu[arm]),
        loadAverage: loadavg(),
        inProcess: {
          server: 'this process (startTestServer)',
          itemsPerSec: median(inProcess.perSec[arm]),
          perSliceItemsPerSec: inProcess.perSec[arm],
          cpuUsPerCall: median(inProcess.cpu[arm]),
          ...(arm === 'router' ? { routerVsDirect: inProcess.ratio } : {}),
        },
      },
    });
  }
  console.log(
    `  router_vs_direct_c64 ${measured.ratio.toFixed(3)} (ratio of the arms' mean items/s over ${measured.perRound.length} slices each; of their medians ${measured.ratioOfMedians.toFixed(3)}, median of the rounds' ratios ${measured.medianOfRounds.toFixed(3)}; server in its own process; client CPU per call direct ${median(measured.cpu.direct).toFixed(1)} µs, router ${median(measured.cpu.router).toFixed(1)} µs), in this process ${inProcess.ratio.toFixed(3)}, load ${loadavg()[0]?.toFixed(1)}`,
  );
  return measured.ratio;
}

/**
 * A chaos reference server in a child process, run as `--servers` says (default: see above), with
 * `--serverWarmup N` runs of its model's warm-up (`model_warmup`; a diagnostic, to compare side by side;
 * the default is the fixture's, none).
 */
function startServer(): Promise<ServerProcess> {
  const runtime = flag('servers');
  if (runtime !== undefined && runtime !== 'source' && runtime !== 'built')
    throw new Error(`--servers takes 'source' or 'built', not '${runtime}'`);
  const warmup = flag('serverWarmup');
  return startServerProcess({
    ...(runtime === undefined ? {} : { runtime }),
    ...(warmup === undefined ? {} : { warmup: Number(warmup) }),
  });
}

/** A process's resident memory (VmRSS, MiB) from /proc; NaN where there is none to read. */
function residentMiB(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
    return Math.round((kib / 1024) * 10) / 10;
  } catch {
    return Number.NaN;
  }
}

/** Kills `server` (kill -9) and returns when the kill was sent (performance.now()). */
function killNow(server: ServerProcess): number {
  const at = performance.now();
  void server.kill();
  return at;
}

/**
 * Lost calls: 2,000 concurrent calls through a router a → b with a micro-batcher under each
 * target (default options everywhere), a killed with kill -9 once it has run a batch.
 */
async function burst(runs: number, cases: BenchCase[]): Promise<number> {
  const lost: number[] = [];
  const p99s: number[] = [];
  for (let run = 0; run < runs; run++) {
    const servers = await Promise.all([startServer(), startServer()]);
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const rig = await startChaosRig({ endpoints: [a.url, b.url] });
    try {
      await rig.warm();
      const calls = Array.from({ length: 2_000 }, (_, id) => rig.call(id));
      while (a.rows() < 64) await new Promise((resolve) => setTimeout(resolve, 2));
      killNow(a);
      const outcomes = await Promise.all(calls);
      lost.push(outcomes.filter((outcome) => outcome.result !== 'ok').length);
      const latencies = outcomes.map((outcome) => outcome.settledAt - outcome.sentAt).sort((x, y) => x - y);
      p99s.push(percentile(latencies, 99));
      console.log(`  burst ${run + 1}/${runs}: ${JSON.stringify(tally(outcomes))}`);
    } finally {
      await rig.close();
      await Promise.all(servers.map((server) => server.stop()));
    }
  }
  cases.push({
    name: 'failover burst 2000 kill -9 a, batchers under the router',
    arm: 'router',
    load: 'burst2000',
    p99Ms: median(p99s),
    extra: { lostCalls: lost, p99sMs: p99s },
  });
  return Math.max(...lost);
}

/**
 * Gap and latency: an open loop at `rate` calls/s (well under one server's capacity, so b gets
 * nothing while a lives) for 1 s, a killed with kill -9, 1.5 s more. Gap: kill → first success on b.
 * p99 of the calls sent in the second after the kill ÷ p99 of those sent in the second before it.
 */
async function openLoop(
  runs: number,
  rate: number,
  cases: BenchCase[],
): Promise<{ gapMs: number; p99OverSteady: number; lost: number }> {
  const gaps: number[] = [];
  const ratios: number[] = [];
  const lost: number[] = [];
  const steadyP99s: number[] = [];
  const failoverP99s: number[] = [];
  /** Per run, kill → each step of the gap (ms): see `GapSteps`. */
  const steps: GapSteps[] = [];
  let serverRuntime = '';
  /** Per run, this process's CPU time (ms) from b's first batch handed to its channel to its flush. */
  const flushCpuMs: number[] = [];
  /** Per run, the rows of b's first execution after the kill (its model time is 0.1 ms per row). */
  const firstBatchRows: number[] = [];
  /** Per run, a's resident memory (MiB) just before the kill: the kernel frees it before closing a's sockets. */
  const rssAMiB: number[] = [];
  /** Per run, how far past its cost b's simulated GPU ended b's first execution after the kill (ms). */
  const bOverrunMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const servers = await Promise.all([startServer(), startServer()]);
    const [a, b] = servers as [ServerProcess, ServerProcess];
    serverRuntime = a.runtime;
    const at: Record<keyof GapSteps, number> = {
      loop: Number.POSITIVE_INFINITY,
      exit: Number.POSITIVE_INFINITY,
      socketEndA: Number.POSITIVE_INFINITY,
      socketEndHandledA: Number.POSITIVE_INFINITY,
      connectionLost: Number.POSITIVE_INFINITY,
      rpcFailedOnA: Number.POSITIVE_INFINITY,
      memberFailedOnA: Number.POSITIVE_INFINITY,
      firstFailureOnA: Number.POSITIVE_INFINITY,
      ejected: Number.POSITIVE_INFINITY,
      sendAfterLoss: Number.POSITIVE_INFINITY,
      firstToB: Number.POSITIVE_INFINITY,
      batchToB: Number.POSITIVE_INFINITY,
      batchFlushed: Number.POSITIVE_INFINITY,
      batchWritten: Number.POSITIVE_INFINITY,
      bRead: Number.POSITIVE_INFINITY,
      bArrived: Number.POSITIVE_INFINITY,
      bEntered: Number.POSITIVE_INFINITY,
      bSlot: Number.POSITIVE_INFINITY,
      bDone: Number.POSITIVE_INFINITY,
      bRan: Number.POSITIVE_INFINITY,
      answerRead: Number.POSITIVE_INFINITY,
      answerLastRead: Number.POSITIVE_INFINITY,
      answerFromChannel: Number.POSITIVE_INFINITY,
      answerFromBatcher: Number.POSITIVE_INFINITY,
      firstOnB: Number.POSITIVE_INFINITY,
    };
    let killAt = Number.POSITIVE_INFINITY;
    let flushCpu = Number.NaN;
    const first = (step: keyof GapSteps) => {
      if (killAt !== Number.POSITIVE_INFINITY && at[step] === Number.POSITIVE_INFINITY)
        at[step] = performance.now();
    };
    // b's socket, as the rig's client dials it: when b's first batch reaches the kernel (a write on
    // an uncorked socket, or the uncork that flushes it) and when bytes from b arrive.
    const bPort = Number(b.url.split(':').at(-1));
    const aPort = Number(a.url.split(':').at(-1));
    /** performance.now() of every read from b's socket after the kill. */
    const readsFromB: number[] = [];
    const onSocket = (message: unknown) => {
      const socket = (message as { socket: Socket }).socket;
      socket.once('connect', () => {
        if (socket.remotePort === aPort) {
          // a's FIN read here, ahead of every other listener (the client's own among them).
          socket.prependListener('end', () => first('socketEndA'));
          // After every other 'end' listener: the client's own handling of the FIN is over.
          socket.on('end', () => first('socketEndHandledA'));
          return;
        }
        if (socket.remotePort !== bPort) return;
        socket.prependListener('data', () => {
          if (killAt !== Number.POSITIVE_INFINITY) readsFromB.push(performance.now());
        });
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        socket.write = ((...args: unknown[]) => {
          if (socket.writableCorked === 0 && at.batchToB !== Number.POSITIVE_INFINITY) first('batchWritten');
          return write(...args);
        }) as typeof socket.write;
        const uncork = socket.uncork.bind(socket);
        socket.uncork = () => {
          if (socket.writableCorked === 1 && at.batchToB !== Number.POSITIVE_INFINITY) first('batchWritten');
          uncork();
        };
      });
    };
    subscribe('net.client.socket', onSocket);
    const rig = await startChaosRig({ endpoints: [a.url, b.url] });
    // Where the gap goes: a's process gone (its 'exit' in this process, after the kernel closed its
    // sockets), a's channel loses its connection, the first attempt on a fails, a is ejected, the
    // open loop sends again, the first call enters b's target, b's batcher sends it, b's server has
    // run it (its `ran` line), the answer is back.
    a.child.once('exit', () => first('exit'));
    rig.clients[0]?.grpc.watchConnectivity((change) => {
      if (change.from === 'ready') first('connectionLost');
    });
    rig.router.breaker('a').on('eject', () => first('ejected'));
    rig.router.on('attempt', (event) => {
      if (event.target === 'a' && event.outcome === 'failure') first('firstFailureOnA');
      if (event.target === 'b' && event.outcome === 'success') first('firstOnB');
    });
    // a's side of the wave: the first RPC on a's channel that fails after the kill (its HTTP/2
    // stream closed with the connection), then the first call a's batcher fails back to the router.
    const channelA = rig.clients[0]?.grpc as InferTransport;
    const channelAInfer = channelA.infer.bind(channelA);
    channelA.infer = (request, options) => {
      const pending = channelAInfer(request, options);
      pending.catch(() => first('rpcFailedOnA'));
      return pending;
    };
    const intoA = rig.batchers[0] as InferTransport;
    const batcherAInfer = intoA.infer.bind(intoA);
    intoA.infer = (request, options) => {
      const pending = batcherAInfer(request, options);
      pending.catch(() => first('memberFailedOnA'));
      return pending;
    };
    const intoB = rig.batchers[1] as InferTransport;
    const batcherInfer = intoB.infer.bind(intoB);
    intoB.infer = (request, options) => {
      first('firstToB');
      const pending = batcherInfer(request, options);
      if (killAt !== Number.POSITIVE_INFINITY) pending.then(() => first('answerFromBatcher')).catch(() => {});
      return pending;
    };
    const channelB = rig.clients[1]?.grpc as InferTransport;
    const channelInfer = channelB.infer.bind(channelB);
    channelB.infer = (request, options) => {
      if (killAt !== Number.POSITIVE_INFINITY && at.batchToB === Number.POSITIVE_INFINITY) {
        // The CPU time this process spends before that immediate phase (the rest of the failure
        // wave: other calls failing on a and moving to b), which the batch waits for.
        const cpu = process.cpuUsage();
        setImmediate(() => {
          first('batchFlushed');
          const spent = process.cpuUsage(cpu);
          flushCpu = (spent.user + spent.system) / 1000;
        });
      }
      first('batchToB');
      const pending = channelInfer(request, options);
      if (killAt !== Number.POSITIVE_INFINITY) pending.then(() => first('answerFromChannel')).catch(() => {});
      return pending;
    };
    b.child.stdout?.on('data', (chunk: string) => {
      if (chunk.includes('ran ')) first('bRan');
    });
    try {
      await rig.warm();
      const warmB = Number(flag('warmB') ?? 0);
      if (warmB > 0) {
        const warmer = createTritonClient({ url: b.url, enableGpuIpc: false });
        let left = warmB;
        const worker = async () => {
          while (left-- > 0) await warmer.grpc.infer(request, {});
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        await warmer.close();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const calls: Promise<CallOutcome>[] = [];
      const started = performance.now();
      const total = Math.round(rate * 2.5);
      let killed = false;
      for (let sent = 0; sent < total; ) {
        // Latency counts from the scheduled send time (no coordinated omission).
        const due = Math.floor(((performance.now() - started) * rate) / 1000);
        while (sent < Math.min(due + 1, total)) {
          const scheduled = started + (sent * 1000) / rate;
          if (at.connectionLost !== Number.POSITIVE_INFINITY) first('sendAfterLoss');
          calls.push(rig.call(sent).then((outcome) => ({ ...outcome, sentAt: scheduled })));
          sent += 1;
        }
        if (!killed && performance.now() - started >= 1_000) {
          killed = true;
          rssAMiB.push(residentMiB(a.child.pid));
          killAt = killNow(a);
          // How late this process's event loop runs a timer due now (its lag at the kill).
          setTimeout(() => first('loop'), 0);
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const outcomes = await Promise.all(calls);
      const latency = (from: number, to: number) =>
        outcomes
          .filter((outcome) => outcome.sentAt >= from && outcome.sentAt < to)
          .map((outcome) => outcome.settledAt - outcome.sentAt)
          .sort((x, y) => x - y);
      const steady = percentile(latency(killAt - 1_000, killAt), 99);
      const during = percentile(latency(killAt, killAt + 1_000), 99);
      // b's own instants of its first execution after the kill (its `ran … @` line, on the machine's
      // monotonic clock): headers read, the request decoded, the slot taken, the slot's time over.
      const onB = b.executions.find((execution) => toPerformanceNow(execution.entered) >= killAt);
      firstBatchRows.push(onB?.rows ?? Number.NaN);
      if (onB !== undefined) {
        if (Number.isFinite(onB.read)) at.bRead = toPerformanceNow(onB.read);
        bOverrunMs.push(onB.overrunMs);
        at.bArrived = toPerformanceNow(onB.arrived);
        at.bEntered = toPerformanceNow(onB.entered);
        at.bSlot = toPerformanceNow(onB.slot);
        at.bDone = toPerformanceNow(onB.done);
        at.answerRead = readsFromB.find((time) => time >= at.bDone) ?? Number.POSITIVE_INFINITY;
        at.answerLastRead =
          readsFromB.findLast((time) => time >= at.bDone && time <= at.answerFromBatcher) ??
          Number.POSITIVE_INFINITY;
      }
      const step = Object.fromEntries(
        Object.entries(at).map(([key, value]) => [key, Math.round((value - killAt) * 10) / 10]),
      ) as unknown as GapSteps;
      steps.push(step);
      flushCpuMs.push(Math.round(flushCpu * 100) / 100);
      gaps.push(step.firstOnB);
      ratios.push(during / steady);
      steadyP99s.push(steady);
      failoverP99s.push(during);
      lost.push(outcomes.filter((outcome) => outcome.result !== 'ok').length);
      console.log(
        `  open loop ${run + 1}/${runs}: gap ${step.firstOnB} ms (timer lag +${step.loop}, a exited +${step.exit}, a's socket end-of-stream +${step.socketEndA} (handled +${step.socketEndHandledA}), connection lost +${step.connectionLost}, a's first RPC failed +${step.rpcFailedOnA}, its first call failed back +${step.memberFailedOnA}, first failure on a +${step.firstFailureOnA}, a ejected +${step.ejected}, next call sent +${step.sendAfterLoss}, first call to b +${step.firstToB}, b's batch sent +${step.batchToB}, written +${step.batchWritten}, flushed +${step.batchFlushed} (after ${flushCpu.toFixed(1)} ms of CPU here), b's server: headers in +${step.bArrived}, entered +${step.bEntered}, slot +${step.bSlot}, done +${step.bDone}, its ran line here +${step.bRan}, answer read +${step.answerRead} (last read +${step.answerLastRead}), out of b's channel +${step.answerFromChannel}, out of b's batcher +${step.answerFromBatcher}, answer +${step.firstOnB}: b took ${(step.firstOnB - step.batchToB).toFixed(1)} from its send; its first batch ${onB?.rows} rows, its GPU ${onB?.overrunMs} ms past the cost; a's RSS at the kill ${rssAMiB.at(-1)} MiB), p99 ${steady.toFixed(1)} → ${during.toFixed(1)} ms, ${JSON.stringify(tally(outcomes))}, load ${loadavg()[0]?.toFixed(1)}`,
      );
    } finally {
      unsubscribe('net.client.socket', onSocket);
      await rig.close();
      await Promise.all(servers.map((server) => server.stop()));
    }
  }
  const medianOf = (key: keyof GapSteps) => median(steps.map((step) => step[key]));
  console.log(
    `  medians (ms from the kill; servers run ${serverRuntime === 'built' ? 'by plain Node from the built packages' : 'from the sources under tsx'}): ${(Object.keys(steps[0] ?? {}) as (keyof GapSteps)[]).map((key) => `${key} ${medianOf(key)}`).join(', ')}; CPU before b's first batch left ${median(flushCpuMs)}; rows of b's first batch ${firstBatchRows.join(' / ')}; b's GPU past its cost ${bOverrunMs.join(' / ')} ms; a's RSS at the kill ${rssAMiB.join(' / ')} MiB`,
  );
  cases.push({
    name: `failover open loop ${rate}/s kill -9 a, batchers under the router`,
    arm: 'router',
    load: `open${rate}`,
    p99Ms: median(failoverP99s),
    extra: {
      gapsMs: gaps,
      gapStepsMs: steps,
      steadyP99sMs: steadyP99s,
      failoverP99sMs: failoverP99s,
      lostCalls: lost,
      loadAverage: loadavg(),
      serverRuntime: serverRuntime,
      flushCpuMs,
      firstBatchRows,
      rssAMiB,
    },
  });
  return { gapMs: median(gaps), p99OverSteady: median(ratios), lost: Math.max(...lost) };
}

/** Where the failover gap goes, each in ms from the kill (see `openLoop`). */
interface GapSteps {
  /** A 0 ms timer set at the kill fires (this process's event-loop lag). */
  loop: number;
  /** This process sees a's child process exit (the kernel has closed its sockets by then). */
  exit: number;
  /** a's socket reads end-of-stream here (the kernel closed the dead process's socket). */
  socketEndA: number;
  /** The last of the 'end' listeners on a's socket has run (the client's handling of the FIN, synchronous part). */
  socketEndHandledA: number;
  /** a's channel leaves `ready`. */
  connectionLost: number;
  /** The first RPC on a's channel fails (its stream closed with the connection). */
  rpcFailedOnA: number;
  /** a's batcher fails the first call back to the router. */
  memberFailedOnA: number;
  /** The first attempt on a fails (the router's 'attempt' event, after its breaker bookkeeping). */
  firstFailureOnA: number;
  /** a's breaker opens. */
  ejected: number;
  /** The open loop sends its first call after a's connection was lost (this process ran again). */
  sendAfterLoss: number;
  /** The first call enters b's target (its batcher). */
  firstToB: number;
  /** b's batcher sends its first batch. */
  batchToB: number;
  /**
   * This process's next immediate phase after b's batch was handed to the channel: Node's HTTP/2
   * writes a stream's frames to the socket in that phase, so this is about when the batch left.
   */
  batchFlushed: number;
  /** b's first batch reaches the kernel: written on an uncorked socket, or the uncork that flushes it. */
  batchWritten: number;
  /** b's server: the first read of the data burst that brought its first request after the kill. */
  bRead: number;
  /** b's server: the headers of its first request after the kill reached its JavaScript (node:http2 transport only; else as `bEntered`). */
  bArrived: number;
  /** b's server: its first execution after the kill entered the model (request decoded, validated). */
  bEntered: number;
  /** b's server: that execution took the model's slot. */
  bSlot: number;
  /** b's server: the slot's time was over (the answer is built and sent next). */
  bDone: number;
  /** b's server has run a batch (its `ran` line arrived here). */
  bRan: number;
  /** The first read from b's socket after b's slot was over (its answer's bytes, here). */
  answerRead: number;
  /** The last read from b's socket before b's batcher answered (the answer's trailers, when they came apart). */
  answerLastRead: number;
  /** b's channel resolves its first RPC after the kill (the response decoded). */
  answerFromChannel: number;
  /** b's batcher answers its first call after the kill (before the router's bookkeeping). */
  answerFromBatcher: number;
  /** The first success on b: the gap. */
  firstOnB: number;
}

export async function run(): Promise<void> {
  const reps = Number(flag('reps') ?? 8);
  const sliceMs = Number(flag('sliceMs') ?? 1000);
  const failovers = Number(flag('failovers') ?? 3);
  const rate = Number(flag('rate') ?? 400);
  // `--only open` (or `burst`, `overhead`: router_vs_direct_c64, `hedge`: hedged_p99_ratio): that part alone, printed,
  // bench/results/router.json untouched.
  const only = flag('only');
  const cases: BenchCase[] = [];
  if (only !== undefined) {
    if (only === 'open') {
      const open = await openLoop(failovers, rate, cases);
      console.log(`  failover_gap_ms ${open.gapMs.toFixed(1)} (median of ${failovers}), lost ${open.lost}`);
    } else if (only === 'burst') {
      console.log(`  failover_lost_calls ${await burst(failovers, cases)}`);
    } else if (only === 'overhead') {
      await overhead(reps, sliceMs, cases);
    } else if (only === 'hedge') {
      const hedge = await hedging(
        Number(flag('hedgeReps') ?? 3),
        Number(flag('hedgeRate') ?? 50),
        Number(flag('hedgeMs') ?? 6000),
        cases,
      );
      for (const run of hedge.runs)
        console.log(
          `  hedged run: p99 ${run.p99Ms.toFixed(1)} ms, ${run.lateCalls} calls >= 500 ms, hedges ${run.hedgesSent} sent / ${run.hedgesRefused} refused, delay ${run.hedgeDelayMs.toFixed(1)} ms`,
        );
      const noHedge = cases.find((entry) => entry.arm === 'no-hedge');
      console.log(`  no-hedge runs: ${JSON.stringify(noHedge?.extra)}`);
      console.log(
        `  hedged_p99_ratio ${hedge.ratio.toFixed(3)} at ${(hedge.extraLoad * 100).toFixed(1)} % extra load`,
      );
    } else throw new Error(`--only takes 'open', 'burst', 'overhead' or 'hedge', not '${only}'`);
    return;
  }
  const routerVsDirect = await overhead(reps, sliceMs, cases);
  const lostInBurst = await burst(failovers, cases);
  const open = await openLoop(failovers, rate, cases);
  const strategies = await routerStrategies(cases);
  report({
    suite: 'router',
    versions: { '@infergate/core': packageVersion('core'), '@infergate/router': packageVersion('router') },
    cases,
    ratios: {
      router_vs_direct_c64: routerVsDirect,
      failover_lost_calls: Math.max(lostInBurst, open.lost),
      failover_gap_ms: open.gapMs,
      failover_first_success_ms: open.gapMs,
      failover_p99_over_steady: open.p99OverSteady,
      ...strategies.ratios,
    },
    targets: {
      router_vs_direct_c64: '>= 0.95',
      failover_lost_calls: '0',
      failover_gap_ms: '<= 50',
      failover_first_success_ms: 'report',
      failover_p99_over_steady: '<= 3',
      ...strategies.targets,
    },
    command: 'pnpm bench router',
  });
}
