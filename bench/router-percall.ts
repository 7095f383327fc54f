// The router's per-call cost, side by side: the same `client.grpc` called directly and through
// `createRouter` with one target (and, with `--base DIR`, through a second build of the router, e.g.
// main's dist copied to DIR, for a before ÷ after), closed loop at concurrency 64 on FP32 [16]
// `identity`, the reference server in its own process. Rounds rotate the arms' order; each slice
// reports items/s and this process's CPU per call (user + system). Run it on the built packages:
//   node scripts/bootstrap.mjs --dist bench/router-percall.ts [--rounds 6] [--sliceMs 1000]
//       [--base DIR] [--only router]   (`--only`: one arm, for `node --cpu-prof`)
// A build from before 2026-12-01 23:00 imports opossum: DIR/node_modules/opossum must resolve (opossum 9).
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildInferRequest, createTritonClient, type InferTransport } from '@infergate/core';
import { createRouter } from '@infergate/router';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag, median } from './lib.js';
import { startServerProcess } from './server-process.js';

const rounds = Number(flag('rounds') ?? 6);
const sliceMs = Number(flag('sliceMs') ?? 1000);
const base = flag('base');
const only = flag('only');
const request = buildInferRequest('identity', [
  { name: 'INPUT0', datatype: 'FP32', shape: [16], data: new Float32Array(16) },
]);

// The baseline build is imported first: a failed import leaves no server process behind.
const baseRouter =
  base === undefined
    ? undefined
    : ((await import(pathToFileURL(resolve(base, 'index.js')).href)) as { createRouter: typeof createRouter })
        .createRouter;
const { url, child } = await startServerProcess();
const client = createTritonClient({ url, enableGpuIpc: false });
const arms: Record<string, InferTransport> = {
  direct: client.grpc,
  router: createRouter({ targets: [{ name: 'only', transport: client.grpc }] }),
};
if (baseRouter !== undefined) arms.base = baseRouter({ targets: [{ name: 'only', transport: client.grpc }] });
const names = only === undefined ? Object.keys(arms) : [only];
const slice = async (transport: InferTransport, ms: number) => {
  const sample = await closedLoopWindow(() => transport.infer(request, {}), 64, ms);
  if (sample.errors > 0) throw new Error(`${sample.errors} calls failed: ${sample.firstError}`);
  return {
    perSec: sample.completed / (sample.elapsedMs / 1000),
    cpuUsPerCall: (sample.cpuMs * 1000) / sample.completed,
    calls: sample.completed,
  };
};
try {
  for (const name of names) await slice(arms[name] as InferTransport, 1000); // warm up
  const seen: Record<string, { perSec: number[]; cpu: number[] }> = {};
  let calls = 0;
  for (let round = 0; round < rounds; round++) {
    // Rotate: each arm runs first, second, … in turn.
    const order = names.map((_, index) => names[(index + round) % names.length] as string);
    for (const name of order) {
      const result = await slice(arms[name] as InferTransport, sliceMs);
      calls += result.calls;
      seen[name] ??= { perSec: [], cpu: [] };
      seen[name].perSec.push(result.perSec);
      seen[name].cpu.push(result.cpuUsPerCall);
    }
  }
  const summary: Record<string, unknown> = {
    rounds,
    sliceMs,
    calls,
    load: loadavg().map((x) => +x.toFixed(1)),
  };
  for (const name of names) {
    const arm = seen[name] as { perSec: number[]; cpu: number[] };
    summary[name] = {
      itemsPerSec: Math.round(median(arm.perSec)),
      cpuUsPerCall: +median(arm.cpu).toFixed(1),
    };
  }
  const direct = seen.direct;
  if (direct !== undefined) {
    for (const name of names.filter((name) => name !== 'direct')) {
      const arm = seen[name] as { perSec: number[]; cpu: number[] };
      summary[`${name}_vs_direct`] = +(median(arm.perSec) / median(direct.perSec)).toFixed(3);
      // The suite's estimator: each round's ratio (its slices run back to back), then the median.
      summary[`${name}_vs_direct_rounds`] = +median(
        arm.perSec.map((perSec, round) => perSec / (direct.perSec[round] as number)),
      ).toFixed(3);
      summary[`${name}_cpu_added_us`] = +(median(arm.cpu) - median(direct.cpu)).toFixed(1);
    }
  }
  console.log(JSON.stringify(summary));
} finally {
  for (const [name, arm] of Object.entries(arms))
    if (name !== 'direct') await (arm as { close(): Promise<void> }).close();
  await client.close();
  child.kill('SIGTERM');
}
