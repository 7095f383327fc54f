// The reference server's CPU per ModelInfer call (/proc, the server in its own process, the built CLI)
// and the client's, for `identity` and `simulated_gpu` alternately, 4 callers, 600 calls per window:
// what one RPC costs the server apart from the model.
//   node scripts/bootstrap.mjs --dist bench/batcher-server-cpu.ts [ROWS]   (rows per call, default 1)
//   PROBE_URL=host:port (a server of your own, e.g. one under --cpu-prof; no server CPU then)
//   PROBE_MODELS=identity,identity (the models' order)
import { performance } from 'node:perf_hooks';
import { createTritonClient } from '@infergate/core';
import { childCpuMs, startServerProcess } from './server-process.js';

const given = process.env.PROBE_URL;
const { url, child } = given ? { url: given, child: undefined } : await startServerProcess(true);
const client = createTritonClient({ url, enableGpuIpc: false });
const rows = Number(process.argv[2] ?? 1);
const input = () => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [rows, 16], data: new Float32Array(16 * rows) },
];
for (const model of (process.env.PROBE_MODELS ?? 'identity,simulated_gpu,identity,simulated_gpu').split(
  ',',
)) {
  for (let i = 0; i < 100; i++) await client.infer(model, input());
  const n = 600;
  const s0 = child ? childCpuMs(child) : 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const concurrency = 4;
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await client.infer(model, input());
    }),
  );
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  console.log(
    `${model.padEnd(14)} rows ${rows}: ${(ms / n).toFixed(3)} ms/call wall, server CPU ${child ? (((childCpuMs(child) - s0) / n) * 1000).toFixed(0) : '?'} µs/call, client CPU ${((c.user + c.system) / n).toFixed(0)} µs/call`,
  );
}
await client.close();
child?.kill('SIGTERM');
