// The batcher's idle path (one call, nothing in flight): closed loop at concurrency 1 against
// `infergate serve-test` in its own process (the built CLI), the unbatched client and the adaptive
// batcher (and, with --compare <dir>, another build of @infergate/batcher) alternating call by call.
// Prints p50/p90 and the client's CPU per call of each arm: what the batcher adds to a lone call.
//   node scripts/bootstrap.mjs --dist bench/batcher-idle.ts [--calls 1500] [--compare packages/batcher/.dist-old]
// (--compare: see bench/batcher-cpu.ts for how to build the other copy.)
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type InputTensor, type TritonClient } from '@infergate/core';
import { flag, percentile } from './lib.js';
import { startServerProcess } from './server-process.js';

const calls = Number(flag('calls') ?? 1500);
const compare = flag('compare');
const { url, child } = await startServerProcess();
const arms: {
  name: string;
  client: TritonClient;
  closers: TritonClient[];
  latencies: number[];
  cpuUs: number;
}[] = [];
const unbatched = createTritonClient({ url, enableGpuIpc: false });
arms.push({ name: 'unbatched', client: unbatched, closers: [unbatched], latencies: [], cpuUs: 0 });
function batched(name: string, create: typeof createMicroBatcher): void {
  const base = createTritonClient({ url, enableGpuIpc: false });
  const batcher = create(base.grpc, { client: base, flush: 'adaptive' });
  const client = createTritonClient({ url, enableGpuIpc: false, transport: batcher });
  arms.push({ name, client, closers: [client, base], latencies: [], cpuUs: 0 });
}
batched('adaptive', createMicroBatcher);
if (compare !== undefined) {
  const other = (await import(pathToFileURL(resolve(compare, 'index.js')).href)) as {
    createMicroBatcher: typeof createMicroBatcher;
  };
  batched('adaptive (--compare)', other.createMicroBatcher);
}
const inputs = (): InputTensor[] => [
  { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) },
];
for (let call = 0; call < 100; call++)
  for (const arm of arms) await arm.client.infer('simulated_gpu', inputs());
for (let call = 0; call < calls; call++) {
  for (const arm of arms) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await arm.client.infer('simulated_gpu', inputs());
    arm.latencies.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    arm.cpuUs += used.user + used.system;
  }
}
for (const arm of arms) {
  const sorted = [...arm.latencies].sort((a, b) => a - b);
  console.log(
    `${arm.name.padEnd(21)} c1: p50 ${percentile(sorted, 50).toFixed(3)} ms, p90 ${percentile(sorted, 90).toFixed(3)} ms, ` +
      `client CPU ${(arm.cpuUs / calls).toFixed(1)} µs/call`,
  );
  for (const client of arm.closers) await client.close();
}
const exited = new Promise((done) => child.once('exit', done));
child.kill('SIGTERM');
await exited;
