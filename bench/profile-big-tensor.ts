// Where the CPU of a 1 MiB call goes, on both sides: the reference server in its own process (this
// checkout's CLI, or another build's with --server), driven by this checkout's client (`core`) or by
// tritonclient.grpc.aio (`tc_aio`, interop venv), closed loop on identity FP32 [1,elements]. Prints,
// per window, items/s and CPU ms per call split user / system for the client and for the server.
// Run under `node --cpu-prof` for the client's profile; `--server-prof DIR` starts the server under
// `--cpu-prof --cpu-prof-dir DIR` (the profile is written when it stops).
//   node scripts/bootstrap.mjs --dist bench/profile-big-tensor.ts [--arms core,tc_aio] [--seconds 4]
//        [--concurrency 16] [--elements 262144] [--rounds 1] [--server OTHER/packages/cli/dist/bin.js]
//        [--server-prof /tmp/prof-server] [--server-flags "--trace-gc"] [--calls-file /tmp/calls.json]
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createTritonClient } from '@infergate/core';
import { cpuTimedLoop, flag, loadAverage as load, ROOT } from './lib.js';

const arms = (flag('arms') ?? 'core').split(',');
const rounds = Number(flag('rounds') ?? 1);
const seconds = Number(flag('seconds') ?? 4);
const concurrency = Number(flag('concurrency') ?? 16);
const elements = Number(flag('elements') ?? 262_144);
const serverBin = flag('server') ?? join(ROOT, 'packages/cli/dist/bin.js');
const serverProf = flag('server-prof');
/** More node flags for the server process (space-separated, e.g. "--trace-gc"). */
const serverFlags =
  flag('server-flags')
    ?.split(' ')
    .filter((part) => part !== '') ?? [];
const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');
const run = promisify(execFile);

/** User and system CPU ms used so far by `pid` (Linux /proc, clock ticks of 10 ms). */
function cpuOf(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

interface ClientWindow {
  calls: number;
  elapsedMs: number;
  userMs: number;
  systemMs: number;
}

async function coreWindow(url: string, ms: number, onStart: () => void): Promise<ClientWindow> {
  const client = createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000 });
  const data = new Float32Array(elements).fill(1.5);
  const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, elements], data }];
  try {
    const warm = performance.now() + 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < warm) await client.infer('identity', inputs);
      }),
    );
    onStart();
    return await cpuTimedLoop(concurrency, ms, () => client.infer('identity', inputs));
  } finally {
    await client.close();
  }
}

async function pythonWindow(url: string, ms: number): Promise<ClientWindow> {
  const script = join(ROOT, 'bench/suites/unary_tritonclient.py');
  const args = [script, 'aio', url, 'identity', String(elements), String(concurrency), String(ms / 1000)];
  const { stdout } = await run(PYTHON, args, { timeout: ms + 120_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
    completed: number;
    elapsedMs: number;
    cpuMs: number;
  };
  // The script reports user + system together.
  return { calls: out.completed, elapsedMs: out.elapsedMs, userMs: out.cpuMs, systemMs: Number.NaN };
}

const server = spawn(
  process.execPath,
  [
    ...(serverProf === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', serverProf]),
    ...serverFlags,
    serverBin,
    'serve-test',
    '--port',
    '0',
    '--no-llm',
    '--json',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise<string>((resolve) => {
  // The address is the first JSON line; anything else the server prints (--trace-gc) goes to stderr.
  createInterface({ input: server.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    if (line.startsWith('{"triton"')) resolve((JSON.parse(line) as { triton: string }).triton);
    else process.stderr.write(`server: ${line}\n`);
  });
});
const serverCalls: Record<string, number> = {};
try {
  for (let round = 0; round < rounds; round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      const loadBefore = load();
      let before = cpuOf(server.pid as number);
      const window =
        arm === 'tc_aio'
          ? await pythonWindow(url, seconds * 1000)
          : await coreWindow(url, seconds * 1000, () => {
              before = cpuOf(server.pid as number);
            });
      const after = cpuOf(server.pid as number);
      // The server's CPU covers the warm-up too: divide by every call it served in the window.
      const served = window.calls + (arm === 'tc_aio' ? 20 : 0);
      serverCalls[arm] = (serverCalls[arm] ?? 0) + served;
      const per = (value: number, calls: number) => (value / calls).toFixed(3);
      console.log(
        JSON.stringify({
          round,
          arm,
          load: `${loadBefore}→${load()}`,
          itemsPerSec: Math.round((window.calls * 1000) / window.elapsedMs),
          clientUserMsPerCall: per(window.userMs, window.calls),
          clientSystemMsPerCall: per(window.systemMs, window.calls),
          serverUserMsPerCall: per(after.user - before.user, served),
          serverSystemMsPerCall: per(after.system - before.system, served),
        }),
      );
    }
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  const file = flag('calls-file');
  if (file !== undefined) writeFileSync(file, JSON.stringify(serverCalls));
}
