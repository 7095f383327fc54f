// The per-call profile behind the unary suite's missed figures: one engine, one tensor size, closed
// loop against the reference server in its own process. Run it under `node --cpu-prof`, then read
// the profile with `node bench/profile-summary.mjs <file>.cpuprofile <calls>`.
//   node --cpu-prof --cpu-prof-dir=/tmp/prof $(which tsx) bench/profile-unary.ts \
//     --engine http2 --elements 16 --concurrency 16 --seconds 3
// (run through scripts/bootstrap.mjs --dist to measure the built packages, as the suites do)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createTritonClient } from '@infergate/core';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag, ROOT } from './lib.js';

const engine = flag('engine') === 'http2' ? 'http2' : 'grpc-js';
const elements = Number(flag('elements') ?? 16);
const concurrency = Number(flag('concurrency') ?? 16);
const seconds = Number(flag('seconds') ?? 3);

const child = spawn(
  join(ROOT, 'node_modules/.bin/tsx'),
  [
    '--conditions=@infergate/source',
    join(ROOT, 'packages/cli/src/bin.ts'),
    'serve-test',
    '--port',
    '0',
    '--no-llm',
    '--json',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise<string>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('the reference server did not start within 60 s')), 60_000);
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => {
    clearTimeout(timer);
    resolve((JSON.parse(line) as { triton: string }).triton);
  });
});
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
