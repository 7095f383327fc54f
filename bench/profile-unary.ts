import { createTritonClient } from '@infergate/core';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag } from './lib.js';
import { startServerProcess } from './server-process.js';

const engine = flag('engine') === 'http2' ? 'http2' : 'grpc-js';
const elements = Number(flag('elements') ?? 16);
const concurrency = Number(flag('concurrency') ?? 16);
const seconds = Number(flag('seconds') ?? 3);

const { url, child } = await startServerProcess();
const client = createTritonClient({ url, engine, enableGpuIpc: false, timeoutMs: 60_000 });
try {
  const data = Float32Array.from({ length: elements }, () => Math.random());
  const call = () =>
    client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data }]);
  const warmUp = await closedLoopWindow(call, concurrency, 1000);
  const sample = await closedLoopWindow(call, concurrency, seconds * 1000);
  console.log(
    JSON.stringify({
      engine,
      elements,
      concurrency,
      calls: sample.completed,
      errors: warmUp.errors + sample.errors,
      // The profile covers both windows: divide its totals by this.
      profiledCalls: warmUp.completed + sample.completed,
      itemsPerSec: (sample.completed * 1000) / sample.elapsedMs,
      cpuMsPerCall: sample.cpuMs / sample.completed,
    }),
  );
} finally {
  await client.close();
  child.kill('SIGTERM');
}
