// The reference server's CPU per ModelInfer call (/proc, each server in its own process, the built CLI
// under --dist) and the client's, for each gRPC transport of the server side by side: one
// `infergate serve-test --transport <t>` per transport, the cases and transports interleaved (the
// transports' order rotated every round), 4 callers, 600 calls per window. What one RPC costs the
// server apart from the model, and each server process's RSS.
//   node scripts/bootstrap.mjs --dist bench/batcher-server-cpu.ts [ROWS] [--rounds 3] [--calls 600]
//     [--transports http2,grpc-js] [--cases identity:1,identity:64,simulated_gpu:64]
//   PROBE_URL=host:port (a server of your own, e.g. one under --cpu-prof; no server CPU then)
//   --servers base=/tmp/base/packages/cli/dist/bin.js,built (instead of --transports: one http2 server per
//     entry, `label=path` of a CLI bin.js — another build, e.g. main's copied to a temp dir with its
//     node_modules linked — or `built`, this checkout's; before/after of a change in the same run)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { flag } from './lib.js';
import { childCpuMs, startServerProcess } from './server-process.js';

const rounds = Number(flag('rounds') ?? 3);
const calls = Number(flag('calls') ?? 600);
const concurrency = 4;
// A bare number (the older form, `batcher-server-cpu.ts 64`) measures identity and simulated_gpu at that many rows.
const rowsGiven = /^\d+$/.test(process.argv[2] ?? '') ? process.argv[2] : undefined;
const defaultCases = rowsGiven
  ? `identity:${rowsGiven},simulated_gpu:${rowsGiven}`
  : 'identity:1,identity:64,simulated_gpu:64';
const cases = (flag('cases') ?? defaultCases).split(',').map((entry) => {
  const [model = 'identity', rows = '1'] = entry.split(':');
  return { model, rows: Number(rows) };
});

interface Arm {
  transport: string;
  url: string;
  child: import('node:child_process').ChildProcess | undefined;
  client: TritonClient;
}

/** Resident set of a process, MB (/proc; NaN elsewhere). */
function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('VmRSS:'));
    return Number(line?.split(/\s+/)[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** `node <bin> serve-test` of another build; its address within 60 s. */
async function startBin(bin: string) {
  const child = spawn(process.execPath, [bin, 'serve-test', '--port', '0', '--no-llm', '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} did not start within 60 s`)), 60_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { triton: string }).triton);
    });
    child.once('exit', (code) => reject(new Error(`${bin} exited (${code})`)));
  });
  return { url, child };
}

const given = process.env.PROBE_URL;
const servers = flag('servers')?.split(',');
const transports = given ? ['given'] : (servers ?? (flag('transports') ?? 'http2,grpc-js').split(','));
const arms: Arm[] = [];
for (const transport of transports) {
  const [label, bin] = transport.split('=') as [string, string | undefined];
  const { url, child } = given
    ? { url: given, child: undefined }
    : servers === undefined
      ? await startServerProcess(true, transport)
      : bin === undefined
        ? await startServerProcess(true, 'http2')
        : await startBin(bin);
  arms.push({ transport: label, url, child, client: createTritonClient({ url, enableGpuIpc: false }) });
}
const startRss = arms.map((arm) => rssMb(arm.child?.pid));

const input = (rows: number) => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [rows, 16], data: new Float32Array(16 * rows) },
];

async function window(arm: Arm, model: string, rows: number, n: number) {
  const s0 = arm.child ? childCpuMs(arm.child) : Number.NaN;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await arm.client.infer(model, input(rows));
    }),
  );
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return {
    wallMs: ms / n,
    serverUs: ((childCpuMs(arm.child as never) - s0) / n) * 1000,
    clientUs: (c.user + c.system) / n,
  };
}

// Warm-up: every case on every server, so the JIT has optimised each path before measuring (with
// 200 calls the first round still read 2–3× the others).
for (const arm of arms) for (const { model, rows } of cases) await window(arm, model, rows, 1000);

const results = new Map<string, { serverUs: number[]; clientUs: number[]; wallMs: number[] }>();
const key = (transport: string, model: string, rows: number) => `${model}:${rows}:${transport}`;
for (let round = 0; round < rounds; round++) {
  for (const { model, rows } of cases) {
    for (let i = 0; i < arms.length; i++) {
      const arm = arms[(i + round) % arms.length] as Arm;
      const measured = await window(arm, model, rows, calls);
      const entry = results.get(key(arm.transport, model, rows)) ?? {
        serverUs: [],
        clientUs: [],
        wallMs: [],
      };
      entry.serverUs.push(measured.serverUs);
      entry.clientUs.push(measured.clientUs);
      entry.wallMs.push(measured.wallMs);
      results.set(key(arm.transport, model, rows), entry);
    }
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

console.log(
  `load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}; ${rounds} rounds × ${calls} calls, ${concurrency} callers; medians`,
);
console.log(
  'case                 transport  server µs/call  client µs/call  wall ms/call   (server per round)',
);
for (const { model, rows } of cases) {
  for (const arm of arms) {
    const entry = results.get(key(arm.transport, model, rows));
    if (entry === undefined) continue;
    console.log(
      `${`${model} ×${rows}`.padEnd(20)} ${arm.transport.padEnd(9)} ${median(entry.serverUs).toFixed(0).padStart(14)} ${median(entry.clientUs).toFixed(0).padStart(15)} ${median(entry.wallMs).toFixed(3).padStart(13)}   (${entry.serverUs.map((value) => value.toFixed(0)).join(' ')})`,
    );
  }
  if (arms.length === 2) {
    const [a, b] = arms.map((arm) => results.get(key(arm.transport, model, rows))) as unknown as [
      { serverUs: number[] },
      { serverUs: number[] },
    ];
    console.log(
      `${''.padEnd(20)} ${arms[0]?.transport} ÷ ${arms[1]?.transport} server CPU: ${(median(a.serverUs) / median(b.serverUs)).toFixed(2)}`,
    );
  }
}
console.log(
  `server RSS MB at start → after: ${arms.map((arm, i) => `${arm.transport} ${startRss[i]?.toFixed(1)} → ${rssMb(arm.child?.pid).toFixed(1)}`).join(', ')}`,
);
for (const arm of arms) {
  await arm.client.close();
  arm.child?.kill('SIGTERM');
}
