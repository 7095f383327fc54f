// Where the client's CPU per call goes while it waits: user and system CPU, and context switches
// (process.resourceUsage), per ModelInfer call of 64 rows, 4 callers, against the reference server
// in its own process: `identity` (answers at once), `simulated_gpu` (5.2 ms per execution, one
// slot), and `identity` with each caller pausing 5 ms after each answer (the client waits as long
// as on simulated_gpu, the server does as little as on identity).
//   node scripts/bootstrap.mjs --dist bench/batcher-wait-cpu.ts [ROUNDS]
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTritonClient } from '@infergate/core';
import { startServerProcess } from './server-process.js';

const { url, child } = await startServerProcess(true);
const client = createTritonClient({ url, enableGpuIpc: false });
const rows = 64;
const input = () => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [rows, 16], data: new Float32Array(16 * rows) },
];
const callers = Number(process.env.PROBE_CALLERS ?? 4);
const arms = [
  { name: 'identity', model: 'identity', pauseMs: 0 },
  { name: 'simulated_gpu', model: 'simulated_gpu', pauseMs: 0 },
  { name: 'identity+5ms pause', model: 'identity', pauseMs: 5 },
].filter((arm) =>
  (process.env.PROBE_ARMS ?? 'identity,simulated_gpu,identity+5ms pause').split(',').includes(arm.name),
);
const rounds = Number(process.argv[2] ?? 2);
for (let round = 0; round < rounds; round++) {
  for (const arm of arms) {
    for (let i = 0; i < 50; i++) await client.infer(arm.model, input());
    const n = 400;
    const r0 = process.resourceUsage();
    const t0 = performance.now();
    let left = n;
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (left-- > 0) {
          await client.infer(arm.model, input());
          if (arm.pauseMs > 0) await sleep(arm.pauseMs);
        }
      }),
    );
    const ms = performance.now() - t0;
    const r = process.resourceUsage();
    const per = (a: number, b: number) => ((b - a) / n).toFixed(2);
    console.log(
      `${arm.name.padEnd(20)} ${(ms / n).toFixed(3)} ms/call wall, user ${per(r0.userCPUTime, r.userCPUTime)} µs, system ${per(r0.systemCPUTime, r.systemCPUTime)} µs, ` +
        `voluntary switches ${per(r0.voluntaryContextSwitches, r.voluntaryContextSwitches)}, involuntary ${per(r0.involuntaryContextSwitches, r.involuntaryContextSwitches)} per call`,
    );
  }
}
await client.close();
child.kill('SIGTERM');
