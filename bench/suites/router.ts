// Suite `router`: (1) the router's overhead at concurrency 64 against a healthy reference server
// (identity), routed vs the same GrpcTransport called directly, interleaved A B A B; (2) failover:
// two reference servers, the primary killed under load — time from the kill to the first
// successful fallback response, and p99 latency of the calls started in the second after the kill.
//   pnpm bench router [--reps 5] [--sliceMs 1000] [--failovers 3]
import { performance } from 'node:perf_hooks';
import { buildInferRequest, createTritonClient, type InferTransport } from '@infergate/core';
import { createRouter } from '@infergate/router';
import { startTestServer } from '@infergate/testing';
import { type BenchCase, flag, median, packageVersion, percentile, report } from '../lib.js';

const CONCURRENCY = 64;
const channelOptions = { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 };
const request = buildInferRequest('identity', [
  { name: 'INPUT0', datatype: 'FP32', shape: [16], data: new Float32Array(16) },
]);

/** Closed loop: `CONCURRENCY` workers calling back to back for `ms`. */
async function slice(
  transport: InferTransport,
  ms: number,
): Promise<{ perSec: number; latencies: number[] }> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const worker = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      await transport.infer(request, {});
      latencies.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { perSec: latencies.length / ((performance.now() - started) / 1000), latencies };
}

async function overhead(reps: number, sliceMs: number, cases: BenchCase[]): Promise<number> {
  const server = await startTestServer();
  const client = createTritonClient({ url: server.url, enableGpuIpc: false });
  const router = createRouter({ targets: [{ name: 'only', transport: client.grpc }] });
  try {
    await slice(client.grpc, 500); // warm up both paths
    await slice(router, 500);
    const arms = { direct: [] as number[], router: [] as number[] };
    const latencies = { direct: [] as number[], router: [] as number[] };
    const order = [
      ['direct', client.grpc],
      ['router', router],
    ] as const;
    for (let rep = 0; rep < reps; rep++) {
      // A B, then B A: whichever arm runs second inherits the first one's garbage; alternating
      // spreads that evenly over both arms.
      for (const [arm, transport] of rep % 2 === 0 ? order : [...order].reverse()) {
        const result = await slice(transport, sliceMs);
        arms[arm].push(result.perSec);
        latencies[arm].push(...result.latencies);
      }
    }
    for (const arm of ['direct', 'router'] as const) {
      const sorted = latencies[arm].sort((a, b) => a - b);
      cases.push({
        name: `${arm} c64 identity`,
        arm,
        load: 'c64',
        itemsPerSec: median(arms[arm]),
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        extra: { perSliceItemsPerSec: arms[arm] },
      });
    }
    return median(arms.router) / median(arms.direct);
  } finally {
    await router.close(); // closes client.grpc too
    await client.close();
    await server.stop();
  }
}

async function failover(runs: number, cases: BenchCase[]): Promise<number> {
  const primary = await startTestServer({ stopGraceMs: 100 });
  const fallback = await startTestServer({ stopGraceMs: 100 });
  const clients = [primary, fallback].map((server) =>
    createTritonClient({ url: server.url, enableGpuIpc: false, channelOptions }),
  );
  const router = createRouter({
    targets: [
      { name: 'primary', transport: (clients[0] as (typeof clients)[number]).grpc },
      { name: 'fallback', transport: (clients[1] as (typeof clients)[number]).grpc },
    ],
    breaker: { volumeThreshold: 5, openMs: 200, maxOpenMs: 1000 },
    retry: { maxRetries: 0 },
    attemptTimeoutMs: 1000,
  });
  let killAt = Number.POSITIVE_INFINITY;
  let firstFallback = Number.POSITIVE_INFINITY;
  router.on('attempt', (event) => {
    if (
      event.target === 'fallback' &&
      event.outcome === 'success' &&
      firstFallback === Number.POSITIVE_INFINITY
    ) {
      firstFallback = performance.now();
    }
  });
  const firstSuccessMs: number[] = [];
  const p99s: number[] = [];
  const errors: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      let running = true;
      const window: number[] = [];
      let failed = 0;
      const worker = async () => {
        while (running) {
          const started = performance.now();
          try {
            await router.infer(request, {});
          } catch {
            failed += 1;
          }
          if (started >= killAt && started < killAt + 1000) window.push(performance.now() - started);
        }
      };
      const workers = Array.from({ length: 32 }, worker);
      await new Promise((resolve) => setTimeout(resolve, 500));
      firstFallback = Number.POSITIVE_INFINITY;
      killAt = performance.now();
      primary.kill();
      await new Promise((resolve) => setTimeout(resolve, 1200));
      running = false;
      await Promise.all(workers);
      firstSuccessMs.push(firstFallback - killAt);
      p99s.push(
        percentile(
          window.sort((a, b) => a - b),
          99,
        ),
      );
      errors.push(failed);
      killAt = Number.POSITIVE_INFINITY;
      await primary.restart();
      const end = Date.now() + 10_000;
      while (router.breakerStates().primary?.kind !== 'closed' && Date.now() < end) {
        await router.infer(request, {}).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    cases.push({
      name: 'failover kill primary c32',
      arm: 'router',
      load: 'c32',
      p99Ms: median(p99s),
      extra: { firstSuccessMs, p99sMs: p99s, failedCalls: errors },
    });
    return median(firstSuccessMs);
  } finally {
    await router.close();
    for (const client of clients) await client.close();
    await primary.stop();
    await fallback.stop();
  }
}

export async function run(): Promise<void> {
  const reps = Number(flag('reps') ?? 8);
  const sliceMs = Number(flag('sliceMs') ?? 1000);
  const failovers = Number(flag('failovers') ?? 3);
  const cases: BenchCase[] = [];
  const routerVsDirect = await overhead(reps, sliceMs, cases);
  const firstSuccess = await failover(failovers, cases);
  report({
    suite: 'router',
    versions: { '@infergate/core': packageVersion('core'), '@infergate/router': packageVersion('router') },
    cases,
    ratios: { router_vs_direct_c64: routerVsDirect, failover_first_success_ms: firstSuccess },
    targets: { router_vs_direct_c64: '>= 0.95', failover_first_success_ms: 'report' },
    command: 'pnpm bench router',
  });
}
