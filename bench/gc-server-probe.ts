// What the reference server spends on each client's 1 MiB calls, and its garbage collections: the
// built CLI's `serve-test` runs under `node --trace-gc` in its own process, and each window counts the
// server's CPU per call (/proc) and its mark-compacts and scavenges per call (its trace lines) while
// one client arm calls `identity` with FP32 [1,262144] in a closed loop.
//   node scripts/bootstrap.mjs --dist bench/gc-server-probe.ts
//        [--arms core,into,tc_aio] [--calls 2000] [--concurrency 16] [--rounds 3] [--compare-bin PATH]
// Arms: `core` (the default call), `into` (RequestedOutput.into, decision 0026), `tc_aio` (NVIDIA's
// tritonclient.grpc.aio from the interop venv, for --calls / 700 seconds).
// --compare-bin PATH: a second server from another build's packages/cli/dist/bin.js (say, the commit
// before a change); every round then runs each arm against both servers, the servers' order
// alternated round by round (A B, B A, …).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { flag, ROOT, round } from './lib.js';
import { childCpuMs } from './server-process.js';

const run = promisify(execFile);
const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');
const SCRIPT = join(ROOT, 'bench/suites/unary_tritonclient.py');
const ELEMENTS = 262_144;

type Arm = 'core' | 'into' | 'tc_aio';
const arms = (flag('arms') ?? 'core,into,tc_aio').split(',') as Arm[];
const calls = Number(flag('calls') ?? 2000);
const concurrency = Number(flag('concurrency') ?? 16);
const rounds = Number(flag('rounds') ?? 3);
const compareBin = flag('compare-bin');

interface Server {
  label: string;
  url: string;
  child: ChildProcess;
  /** The server's stdout so far (its --trace-gc lines). */
  trace: () => string;
  client: TritonClient;
}

async function startServer(label: string, bin: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--trace-gc', bin, 'serve-test', '--port', '0', '--no-llm', '--json'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no address within 60 s`)), 60_000);
    const poll = setInterval(() => {
      const found = /"triton":"([^"]+)"/.exec(out);
      if (found === null) return;
      clearInterval(poll);
      clearTimeout(timer);
      resolve(found[1] as string);
    }, 20);
    child.once('exit', (code) => reject(new Error(`${label}: exited (${code})`)));
  });
  const client = createTritonClient({ url, enableGpuIpc: false });
  return { label, url, child, trace: () => out, client };
}

const data = new Float32Array(ELEMENTS).fill(1.5);
const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, ELEMENTS], data }];

async function nodeArm(client: TritonClient, into: boolean): Promise<number> {
  let left = calls;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const options = into ? { outputs: [{ name: 'OUTPUT0', into: new Float32Array(ELEMENTS) }] } : undefined;
      while (left-- > 0) await client.infer('identity', inputs, options);
    }),
  );
  return calls;
}

async function tritonclientArm(url: string): Promise<number> {
  const seconds = String(Math.max(1, Math.round(calls / 700)));
  const { stdout } = await run(PYTHON, [
    SCRIPT,
    'aio',
    url,
    'identity',
    String(ELEMENTS),
    String(concurrency),
    seconds,
  ]);
  return (JSON.parse(stdout.trim().split('\n').pop() as string) as { completed: number }).completed;
}

function gcCounts(trace: string): { markCompacts: number; scavenges: number } {
  return {
    markCompacts: trace.match(/Mark-Compact/g)?.length ?? 0,
    scavenges: trace.match(/Scavenge/g)?.length ?? 0,
  };
}

async function window(server: Server, arm: Arm): Promise<Record<string, number | string>> {
  const before = gcCounts(server.trace());
  const cpu = childCpuMs(server.child);
  const start = performance.now();
  const done =
    arm === 'tc_aio' ? await tritonclientArm(server.url) : await nodeArm(server.client, arm === 'into');
  const elapsed = performance.now() - start;
  const serverMs = childCpuMs(server.child) - cpu;
  // The trace lines of the window's last collections reach this process a little later.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const after = gcCounts(server.trace());
  return {
    server: server.label,
    arm,
    calls: done,
    callsPerSec: Math.round((done / elapsed) * 1000),
    serverCpuMsPerCall: round(serverMs / done),
    serverMarkCompactsPerCall: round((after.markCompacts - before.markCompacts) / done, 4),
    serverScavengesPerCall: round((after.scavenges - before.scavenges) / done, 4),
  };
}

const servers = [await startServer('this build', join(ROOT, 'packages/cli/dist/bin.js'))];
if (compareBin !== undefined) servers.push(await startServer('compare', compareBin));
try {
  for (const server of servers) await nodeArm(server.client, false);
  const rows: Record<string, number | string>[] = [];
  for (let index = 0; index < rounds; index++) {
    const order = index % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order)
      for (const arm of arms) rows.push({ round: index, ...(await window(server, arm)) });
  }
  console.table(rows);
  console.log(
    `${concurrency} callers, ${calls} calls per Node window; load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
} finally {
  for (const server of servers) {
    await server.client.close();
    server.child.kill();
  }
}
