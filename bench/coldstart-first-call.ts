// A serverless cold path on core, step by step, each run in a fresh Node process: `import()` of the
// built ESM entry, `createTritonClient()`, the first `infer()` (FP32 [1,16] on the reference
// server's `identity`, in its own process) and a second one: where a cold start's time goes. On the
// default http2 engine, inference needs neither the protobuf runtime nor grpc-js (decision 0024),
// so the first answer does not wait for them; other calls would. With --compare DIR (a copy of
// another build's packages/core/dist, placed where it resolves core's dependencies, e.g. under
// packages/core/node_modules/), its arm alternates run by run with this build's.
//   node scripts/bootstrap.mjs --dist bench/coldstart-first-call.ts [--runs 9] [--compare DIR]
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { flag, median, ROOT } from './lib.js';
import { startServerProcess } from './server-process.js';

const probe = `const t0 = performance.now();
const core = await import(process.argv[2]);
const t1 = performance.now();
const client = core.createTritonClient({ url: process.argv[3], enableGpuIpc: false });
const t2 = performance.now();
const inputs = [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) }];
await client.infer('identity', inputs);
const t3 = performance.now();
await client.infer('identity', inputs);
const t4 = performance.now();
await client.close();
process.stdout.write(JSON.stringify([t1 - t0, t2 - t1, t3 - t2, t4 - t3]));`;

const runs = Number(flag('runs') ?? 9);
const compare = flag('compare');
const script = join(tmpdir(), `infergate-first-call-${process.pid}.mjs`);
writeFileSync(script, probe);
const arms = [{ name: 'this build', entry: join(ROOT, 'packages', 'core', 'dist', 'index.js') }];
if (compare !== undefined) arms.push({ name: compare, entry: join(resolve(compare), 'index.js') });
const steps = ['import', 'createTritonClient', 'first infer', 'second infer'];
const times = new Map(arms.map((arm) => [arm.name, steps.map((): number[] => [])]));
const { url, child } = await startServerProcess();
try {
  for (let run = 0; run < runs; run++) {
    for (const arm of run % 2 === 0 ? arms : [...arms].reverse()) {
      const result = spawnSync(process.execPath, [script, pathToFileURL(arm.entry).href, url], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      if (result.status !== 0) throw new Error(`${arm.name} failed: ${result.stderr}`);
      const measured = JSON.parse(result.stdout) as number[];
      const armTimes = times.get(arm.name) ?? [];
      for (const [step, ms] of measured.entries()) armTimes[step]?.push(ms);
    }
  }
} finally {
  child.kill();
}
console.log(`median of ${runs} processes per arm, ms`);
for (const arm of arms) {
  const medians = (times.get(arm.name) ?? []).map((values) => median(values));
  const total = medians.slice(0, 3).reduce((sum, ms) => sum + ms, 0);
  console.log(
    `${arm.name.padEnd(40)} ${steps.map((step, index) => `${step} ${medians[index]?.toFixed(1)}`).join('  ')}  import→first answer ${total.toFixed(1)}`,
  );
}
