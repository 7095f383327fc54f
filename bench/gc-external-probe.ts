// Why the default call at 1 MiB sets off Mark-Compacts: `client.infer` (default engine, http2) on
// the reference server's `identity` in its own process, FP32 [1,262144], closed loop, after a
// warm-up. Per window: client CPU per call (user and system), minor page faults per call, calls/s,
// GC pause ms per call and GC events per call (PerformanceObserver 'gc' entries, majors apart), and
// the isolate's external memory (v8.getHeapStatistics().external_memory) sampled as each call ends.
// Arms are run in turn, their order alternated each round (A B B A).
//   node_modules/.bin/tsx --conditions=@infergate/source bench/gc-external-probe.ts
//        [--arms default,into] [--calls 2000] [--concurrency 16] [--rounds 2] [--ballast MB] [--tls] [--series]
// Arms: `default` (the answer in memory of its own, handed to the caller) and `into` (each caller's
// Float32Array given as `outputs: [{ name, into }]`, the receive memory pooled: decision 0026), and
// `into_fresh` (a fresh Float32Array as `into` on every call: what the default call would cost if
// it received into pooled memory and copied each answer out to memory of the caller's own).
// --tls: the server on a TLS port (built testing package, in a process of its own), the client over
// grpcs:// with the test CA.
// --ballast MB: live JS objects the process holds throughout (an application's own heap).
// --series: also prints, for the last window, external memory in MiB after each call with the GC
// events between them ([S] scavenge, [MC] mark-compact, [IM] incremental marking), in time order.
// V8 flags go before the script (e.g. --trace-gc, --trace-gc-verbose, --heap-growing-percent=N).

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { createTritonClient } from '@infergate/core';
import { generateTestCertificates, type TestCertificates } from '@infergate/testing';
import { flag, ROOT } from './lib.js';
import { startServerProcess } from './server-process.js';

type Arm = 'default' | 'into' | 'into_fresh';
const arms = (flag('arms') ?? 'default,into').split(',') as Arm[];
const calls = Number(flag('calls') ?? 2000);
const concurrency = Number(flag('concurrency') ?? 16);
const rounds = Number(flag('rounds') ?? 2);
const series = process.argv.includes('--series');
const ballast = Array.from({ length: Number(flag('ballast') ?? 0) * 16 }, () =>
  Array.from({ length: 8192 }, (_, index) => index + 0.5),
);

const gc = { minor: 0, major: 0, ms: 0 };
const gcEvents: [number, string][] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.ms += entry.duration;
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++;
    else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gc.minor++;
    if (series) {
      const label =
        kind === constants.NODE_PERFORMANCE_GC_MAJOR
          ? '[MC]'
          : kind === constants.NODE_PERFORMANCE_GC_MINOR
            ? '[S]'
            : '[IM]';
      gcEvents.push([entry.startTime, label]);
    }
  }
}).observe({ entryTypes: ['gc'] });
// GC entries arrive asynchronously: a short pause lets the observer catch up before each reading.
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

const tls = process.argv.includes('--tls');
const certs = tls ? generateTestCertificates() : undefined;
const server = certs === undefined ? await startServerProcess() : await startTlsServerProcess(certs);
const client = createTritonClient({
  url: certs === undefined ? server.url : `grpcs://${server.url}`,
  enableGpuIpc: false,
  ...(certs === undefined ? {} : { tls: { ca: certs.ca, serverName: 'localhost' } }),
});

/**
 * --tls: the built testing package's reference server on a TLS port, in a process of its own (the
 * CLI's serve-test has no TLS options), started by a small inline module; its address on stdout.
 */
async function startTlsServerProcess(files: TestCertificates): Promise<{ url: string; child: ChildProcess }> {
  const entry = pathToFileURL(join(ROOT, 'packages/testing/dist/index.js')).href;
  const script = `const { startTestServer } = await import(${JSON.stringify(entry)});
const server = await startTestServer({ tls: { key: process.env.KEY, cert: process.env.CERT } });
console.log(JSON.stringify({ url: server.url }));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, KEY: files.serverKey, CERT: files.serverCert },
  });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [
    string,
  ];
  return { url: (JSON.parse(line) as { url: string }).url, child };
}
const data = new Float32Array(262_144).fill(1.5);
let samples: [number, number][] = [];

async function run(arm: Arm, count: number, sample: boolean): Promise<void> {
  let left = count;
  const caller = async () => {
    // The `into` arm's memory, one array per caller reused call after call (none for the others).
    const options =
      arm === 'into' ? { outputs: [{ name: 'OUTPUT0', into: new Float32Array(262_144) }] } : undefined;
    while (left-- > 0) {
      const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 262_144], data }];
      if (arm === 'into') await client.infer('identity', inputs, options);
      else if (arm === 'into_fresh')
        await client.infer('identity', inputs, {
          outputs: [{ name: 'OUTPUT0', into: new Float32Array(262_144) }],
        });
      else await client.infer('identity', inputs);
      if (sample) samples.push([performance.now(), getHeapStatistics().external_memory]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
}

const mib = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));
try {
  for (const arm of arms) await run(arm, 200, false);
  const rows: Record<string, number | string>[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      await settle();
      samples = [];
      const before = { ...gc };
      const faults = process.resourceUsage().minorPageFault;
      const cpu = process.cpuUsage();
      const started = performance.now();
      await run(arm, calls, true);
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const faultsPerCall = (process.resourceUsage().minorPageFault - faults) / calls;
      await settle();
      const external = samples.map(([, bytes]) => bytes).sort((a, b) => a - b);
      rows.push({
        round,
        arm,
        'cpu ms/call': Number(((used.user + used.system) / 1000 / calls).toFixed(3)),
        'sys ms/call': Number((used.system / 1000 / calls).toFixed(3)),
        'faults/call': Number(faultsPerCall.toFixed(1)),
        'calls/s': Math.round((calls / wallMs) * 1000),
        'gc ms/call': Number(((gc.ms - before.ms) / calls).toFixed(3)),
        'scavenges/call': Number(((gc.minor - before.minor) / calls).toFixed(4)),
        'mark-compacts/call': Number(((gc.major - before.major) / calls).toFixed(4)),
        'external MiB p50': mib(external[Math.floor(external.length / 2)] ?? 0),
        'external MiB max': mib(external[external.length - 1] ?? 0),
      });
    }
  }
  console.table(rows);
  if (series) {
    const from = samples[0]?.[0] ?? 0;
    const to = samples[samples.length - 1]?.[0] ?? 0;
    const merged: [number, string][] = [
      ...samples.map(([time, bytes]): [number, string] => [time, String(Math.round(bytes / 2 ** 20))]),
      ...gcEvents.filter(([time]) => time >= from && time <= to),
    ].sort((a, b) => a[0] - b[0]);
    console.log(merged.map(([, text]) => text).join(' '));
  }
  console.log(`load ${loadavg()[0]?.toFixed(2)}, ballast ${ballast.length / 16} MB`);
} finally {
  await client.close();
  server.child.kill();
}
