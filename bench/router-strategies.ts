// The routing strategies' figures, run by suite `router` (bench/suites/router.ts) into
// bench/results/router.json:
// - p2c_vs_weighted_slow_endpoint: two reference servers in child processes, `simulated_gpu`
//   economics (one slot, no batching; 40 ms and 120 ms a call, so that the servers, not this
//   process, are the bottleneck on a shared machine), one 3× slower; closed loop at concurrency 32
//   through a `weighted` router and a `p2c-ewma` router over the same two endpoints, slices
//   interleaved A B B A; items/s of p2c ÷ items/s of weighted (medians of the slices).
// - router_added_p99_us: an in-memory transport that answers at once, called directly and through
//   a router (a two-target `p2c-ewma` group), one call at a time, blocks interleaved; p99 routed −
//   p99 direct, in µs (median of the rounds).
// - hedged_p99_ratio: two reference servers whose `simulated_gpu` answers 3% of calls 1 s late
//   (outside the slot); an open loop at 50 calls/s of idempotent calls through a router without
//   hedging and one hedging after the first target's p95 (budget 10%), runs interleaved; p99 with
//   hedging ÷ p99 without (medians of the runs' p99s; latency from the scheduled send), with the extra
//   attempts per call. A run's p99 is its 4th-slowest call of 300, of which about 9 are 1 s late:
//   the figure asks whether the late calls get hedged, and one run reads ~1,004 ms when four of them
//   are not (the budget refused them, or the hedge was late too: 3% of hedges). A no-hedge run reads
//   a fast p99 when no more than 3 of its calls are late (about 2% of runs; the median of three hides
//   one). Each run's late
//   calls (answers >= 500 ms), hedges sent and refused by the budget (the router's 'hedge' events)
//   and the median hedge delay are kept in the hedged case's `extra.perRun`, so that such a run
//   explains itself. `--only hedge` runs this case alone and prints the runs.
// - affinity_hit_rate: 3 reference servers in child processes (`simulated_gpu`, 1 ms), 300 session
//   keys drawn uniformly, 16 workers for 3 s through a router with `affinity.key`; the share of
//   calls that land on their key's home (the target most of the key's calls landed on).
//   affinity_hit_rate_zipf: Zipf-like key popularity with the bounded-load guard on (maxLoadFactor
//   1.25): what spreading hot keys costs in hits.
//   pnpm bench router [--strategySliceMs 2000] [--strategyReps 6] [--hedgeRate 50] [--hedgeMs 6000] [--affinityMs 3000]
//   pnpm bench router --only hedge [--hedgeReps 3]
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  buildInferRequest,
  createTritonClient,
  type InferResponse,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import { createInferRouter, type HedgeEvent, type InferRouter } from '@infergate/router';
import { BENCH_DIR, type BenchCase, closedLoop, flag, median, percentile, ROOT } from './lib.js';

const gpuRequest = buildInferRequest('gpu', [
  { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) },
]);

interface Server {
  url: string;
  stop(): Promise<void>;
}

/** Starts bench/fixtures/strategy-server.ts in its own process; resolves once it listens. */
async function startServer(args: Record<string, number>): Promise<Server> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=@infergate/source',
      join(BENCH_DIR, 'fixtures', 'strategy-server.ts'),
      ...Object.entries(args).flatMap(([name, value]) => [`--${name}`, String(value)]),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('strategy server did not start in 30 s')), 30_000);
    let seen = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      const match = /READY (\S+)/.exec(seen);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`strategy server exited (${code}) before READY`));
    });
  });
  return {
    url,
    async stop() {
      process.off('exit', onExit);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs each arm's slices interleaved (A B, then B A) and records one case per arm. */
async function sideBySide(
  arms: Record<string, InferTransport>,
  run: (transport: InferTransport) => Promise<{ perSec: number; latencies: number[] }>,
  reps: number,
  label: string,
  cases: BenchCase[],
): Promise<Record<string, { perSec: number; p99: number }>> {
  const names = Object.keys(arms);
  const rates: Record<string, number[]> = {};
  const latencies: Record<string, number[]> = {};
  for (const name of names) {
    rates[name] = [];
    latencies[name] = [];
  }
  for (let rep = 0; rep < reps; rep++) {
    for (const name of rep % 2 === 0 ? names : [...names].reverse()) {
      const result = await run(arms[name] as InferTransport);
      rates[name]?.push(result.perSec);
      latencies[name]?.push(...result.latencies);
    }
  }
  const out: Record<string, { perSec: number; p99: number }> = {};
  for (const name of names) {
    const sorted = (latencies[name] as number[]).sort((a, b) => a - b);
    const perSec = median(rates[name] as number[]);
    out[name] = { perSec, p99: percentile(sorted, 99) };
    cases.push({
      name: `${name} ${label}`,
      arm: name,
      load: label,
      itemsPerSec: perSec,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      extra: { perSliceItemsPerSec: rates[name] },
    });
  }
  return out;
}

async function p2cVersusWeighted(sliceMs: number, reps: number, cases: BenchCase[]): Promise<number> {
  const servers = await Promise.all([startServer({ baseMs: 40 }), startServer({ baseMs: 120 })]);
  const clients: TritonClient[] = servers.map((server) =>
    createTritonClient({ url: server.url, enableGpuIpc: false }),
  );
  const targets = clients.map((client, index) => ({
    name: index === 0 ? 'fast' : 'slow',
    transport: client.grpc,
  }));
  const route = { group: [{ route: 'fast' }, { route: 'slow' }] };
  const routers: InferRouter[] = [
    createInferRouter({ name: 'weighted', targets, route }),
    createInferRouter({ name: 'p2c', targets, route, balance: { strategy: 'p2c-ewma' } }),
  ];
  try {
    const [weighted, p2c] = routers as [InferRouter, InferRouter];
    const run = (transport: InferTransport) => closedLoop(transport, gpuRequest, 32, sliceMs);
    await run(weighted);
    await run(p2c);
    const arms = await sideBySide(
      { weighted, 'p2c-ewma': p2c },
      run,
      reps,
      'c32 one of two endpoints 3x slower',
      cases,
    );
    return (arms['p2c-ewma']?.perSec as number) / (arms.weighted?.perSec as number);
  } finally {
    await Promise.all(routers.map((router) => router.close()));
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Open loop: `rate` calls/s for `ms`, latency from each call's scheduled send time. */
async function openLoop(router: InferRouter, rate: number, ms: number): Promise<number[]> {
  const latencies: Promise<number>[] = [];
  const started = performance.now();
  const total = Math.round((rate * ms) / 1000);
  for (let sent = 0; sent < total; ) {
    const due = Math.floor(((performance.now() - started) * rate) / 1000);
    while (sent < Math.min(due + 1, total)) {
      const scheduled = started + (sent * 1000) / rate;
      latencies.push(
        router.infer(gpuRequest, { idempotent: true }).then(() => performance.now() - scheduled),
      );
      sent += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return Promise.all(latencies);
}

/** What one hedged run did: why its p99 is what it is. */
interface HedgedRun {
  p99Ms: number;
  /** Calls answered >= 500 ms after their scheduled send: late calls that no hedge rescued. */
  lateCalls: number;
  hedgesSent: number;
  hedgesRefused: number;
  /** The median delay of the calls that outlasted it (the first target's p95 when each began). */
  hedgeDelayMs: number;
}

/** The hedging case: p99 with hedging ÷ p99 without, the extra load, and what each hedged run did. */
export async function hedging(
  reps: number,
  rate: number,
  ms: number,
  cases: BenchCase[],
): Promise<{ ratio: number; extraLoad: number; runs: HedgedRun[] }> {
  const servers = await Promise.all(
    [0, 1].map(() => startServer({ baseMs: 2, tailProbability: 0.03, tailMs: 1_000 })),
  );
  const clients = servers.map((server) => createTritonClient({ url: server.url, enableGpuIpc: false }));
  const targets = clients.map((client, index) => ({ name: `s${index}`, transport: client.grpc }));
  const route = { group: [{ route: 's0' }, { route: 's1' }] };
  const plain = createInferRouter({ name: 'plain', targets, route });
  const hedged = createInferRouter({ name: 'hedged', targets, route, hedge: { delay: 'p95', budget: 0.1 } });
  let attempts = 0;
  hedged.on('attempt', () => {
    attempts += 1;
  });
  let hedgeEvents: HedgeEvent[] = [];
  hedged.on('hedge', (event) => hedgeEvents.push(event));
  try {
    await openLoop(plain, rate, 1_000); // warm up, and give the hedged router its p95
    await openLoop(hedged, rate, 1_000);
    const arms = { 'no-hedge': [] as number[], hedged: [] as number[] };
    const p99s = { 'no-hedge': [] as number[], hedged: [] as number[] };
    const runs: HedgedRun[] = [];
    const lateCalls: number[] = [];
    let calls = 0;
    attempts = 0;
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? (['no-hedge', 'hedged'] as const) : (['hedged', 'no-hedge'] as const);
      for (const arm of order) {
        hedgeEvents = [];
        const latencies = await openLoop(arm === 'hedged' ? hedged : plain, rate, ms);
        const p99 = percentile(
          [...latencies].sort((a, b) => a - b),
          99,
        );
        const late = latencies.filter((latency) => latency >= 500).length;
        if (arm === 'hedged') {
          calls += latencies.length;
          const outcome = (kind: HedgeEvent['outcome']) =>
            hedgeEvents.filter((event) => event.outcome === kind).length;
          runs.push({
            p99Ms: p99,
            lateCalls: late,
            hedgesSent: outcome('sent'),
            hedgesRefused: outcome('refused'),
            hedgeDelayMs: hedgeEvents.length === 0 ? 0 : median(hedgeEvents.map((event) => event.delayMs)),
          });
        } else lateCalls.push(late);
        arms[arm].push(...latencies);
        p99s[arm].push(p99);
      }
    }
    const extraLoad = attempts / calls - 1;
    for (const arm of ['no-hedge', 'hedged'] as const) {
      const sorted = arms[arm].sort((a, b) => a - b);
      cases.push({
        name: `${arm} open ${rate}/s, 3% of answers 1 s late`,
        arm,
        load: `open${rate}`,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        extra: {
          p99PerRunMs: p99s[arm],
          ...(arm === 'hedged' ? { extraLoad, perRun: runs } : { lateCallsPerRun: lateCalls }),
        },
      });
    }
    // The median of the runs' p99s (the suite's convention); the p99 of all runs pooled is in the cases.
    return { ratio: median(p99s.hedged) / median(p99s['no-hedge']), extraLoad, runs };
  } finally {
    await Promise.all([plain.close(), hedged.close()]);
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(servers.map((server) => server.stop()));
  }
}

async function affinityHitRate(ms: number, zipf: boolean, cases: BenchCase[]): Promise<number> {
  const servers = await Promise.all([0, 1, 2].map(() => startServer({ baseMs: 1 })));
  const clients = servers.map((server) => createTritonClient({ url: server.url, enableGpuIpc: false }));
  /** Per key, how many of its calls landed on each target. */
  const landed = new Map<string, Map<string, number>>();
  // Each target's transport notes where each key's calls land (the attempt's options carry the tenant).
  const landing = (name: string, transport: InferTransport): InferTransport => ({
    infer(request, options) {
      const key = options.tenant ?? '';
      const counts = landed.get(key) ?? new Map<string, number>();
      counts.set(name, (counts.get(name) ?? 0) + 1);
      landed.set(key, counts);
      return transport.infer(request, options);
    },
    stream: (request, options) => transport.stream(request, options),
  });
  const router = createInferRouter({
    targets: clients.map((client, index) => ({
      name: `s${index}`,
      transport: landing(`s${index}`, client.grpc),
    })),
    affinity: { key: (_request, options) => options.tenant, ...(zipf ? { maxLoadFactor: 1.25 } : {}) },
  });
  const keys = 300;
  // Uniform, or Zipf-like: key i drawn with weight 1 / (i + 1), so a few keys are hot.
  const weights = Array.from({ length: keys }, (_, index) => (zipf ? 1 / (index + 1) : 1));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const draw = () => {
    let left = Math.random() * total;
    for (let index = 0; index < keys; index++) {
      left -= weights[index] as number;
      if (left <= 0) return index;
    }
    return keys - 1;
  };
  const latencies: number[] = [];
  try {
    const end = performance.now() + ms;
    const worker = async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await router.infer(gpuRequest, { tenant: `session-${draw()}` });
        latencies.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    await router.close();
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(servers.map((server) => server.stop()));
  }
  // A key's home is where most of its calls landed; a hit is a call that landed there.
  let hits = 0;
  let calls = 0;
  for (const counts of landed.values()) {
    const values = [...counts.values()];
    hits += Math.max(...values);
    calls += values.reduce((sum, count) => sum + count, 0);
  }
  const sorted = latencies.sort((x, y) => x - y);
  cases.push({
    name: `affinity c16, 300 ${zipf ? 'Zipf' : 'uniform'} keys, 3 endpoints`,
    arm: 'affinity',
    load: zipf ? 'c16 zipf, maxLoadFactor 1.25' : 'c16 uniform',
    itemsPerSec: latencies.length / (ms / 1000),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    extra: { keys: landed.size, calls, hits },
  });
  return hits / calls;
}

/** Sequential calls for a fixed count: per-call latencies in µs. */
async function sequential(transport: InferTransport, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let call = 0; call < count; call++) {
    const started = performance.now();
    await transport.infer(gpuRequest, {});
    latencies.push((performance.now() - started) * 1000);
  }
  return latencies;
}

async function addedLatency(reps: number, cases: BenchCase[]): Promise<number> {
  const response: InferResponse = { model: 'gpu', modelVersion: '1', id: '', outputs: [], parameters: {} };
  const memory = (): InferTransport => ({
    infer: () => Promise.resolve(response),
    stream: () => {
      throw new Error('no streams');
    },
  });
  const direct = memory();
  const router = createInferRouter({
    targets: [
      { name: 'a', transport: memory() },
      { name: 'b', transport: memory() },
    ],
    balance: { strategy: 'p2c-ewma' },
  });
  try {
    await sequential(direct, 20_000); // warm up both paths (JIT)
    await sequential(router, 20_000);
    const added: number[] = [];
    const all = { direct: [] as number[], router: [] as number[] };
    for (let rep = 0; rep < reps * 2; rep++) {
      const order = rep % 2 === 0 ? (['direct', 'router'] as const) : (['router', 'direct'] as const);
      const round = { direct: [] as number[], router: [] as number[] };
      for (const arm of order) round[arm] = await sequential(arm === 'direct' ? direct : router, 10_000);
      const p99 = (values: number[]) =>
        percentile(
          [...values].sort((a, b) => a - b),
          99,
        );
      added.push(p99(round.router) - p99(round.direct));
      all.direct.push(...round.direct);
      all.router.push(...round.router);
    }
    for (const arm of ['direct', 'router'] as const) {
      const sorted = all[arm].sort((a, b) => a - b);
      cases.push({
        name: `${arm} in-memory transport c1`,
        arm,
        load: 'c1 in-memory',
        p50Ms: percentile(sorted, 50) / 1000,
        p99Ms: percentile(sorted, 99) / 1000,
        extra: arm === 'router' ? { addedP99UsPerRound: added } : {},
      });
    }
    return median(added);
  } finally {
    await router.close();
  }
}

/** Runs the strategies' benchmarks; returns their named figures and targets for the suite's report. */
export async function routerStrategies(
  cases: BenchCase[],
): Promise<{ ratios: Record<string, number>; targets: Record<string, string> }> {
  const sliceMs = Number(flag('strategySliceMs') ?? 2000);
  const reps = Number(flag('strategyReps') ?? 6);
  const p2c = await p2cVersusWeighted(sliceMs, reps, cases);
  const hedge = await hedging(
    Math.max(2, Math.round(reps / 2)),
    Number(flag('hedgeRate') ?? 50),
    Number(flag('hedgeMs') ?? 6000),
    cases,
  );
  const hitRate = await affinityHitRate(Number(flag('affinityMs') ?? 3000), false, cases);
  const zipfHitRate = await affinityHitRate(Number(flag('affinityMs') ?? 3000), true, cases);
  const addedUs = await addedLatency(reps, cases);
  return {
    ratios: {
      p2c_vs_weighted_slow_endpoint: p2c,
      hedged_p99_ratio: hedge.ratio,
      hedge_extra_load: hedge.extraLoad,
      affinity_hit_rate: hitRate,
      affinity_hit_rate_zipf: zipfHitRate,
      router_added_p99_us: addedUs,
    },
    targets: {
      p2c_vs_weighted_slow_endpoint: '>= 1.3',
      hedged_p99_ratio: '<= 0.5',
      hedge_extra_load: '<= 0.1',
      affinity_hit_rate: '>= 0.99',
      affinity_hit_rate_zipf: 'report',
      router_added_p99_us: '<= 50',
    },
  };
}
