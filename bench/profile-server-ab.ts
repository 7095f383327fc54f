// The reference server's cost per 1 MiB call, two builds side by side: each round starts one server
// process per build (`infergate serve-test`, under `--trace-gc`), alternating their order, and drives
// it with this checkout's client and then with tritonclient.grpc.aio (interop venv), each for a
// window at the given concurrency. Prints, per round, build and client: items/s, the server's CPU
// per call (/proc), its mark-compacts and scavenges per 100 calls (counts, steadier than times on a
// loaded machine), and the client's CPU per call.
//   node scripts/bootstrap.mjs --dist bench/profile-server-ab.ts --before /path/to/main/packages/cli/dist/bin.js
//        [--rounds 2] [--seconds 4] [--concurrency 16] [--elements 262144]
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createTritonClient } from '@infergate/core';
import { cpuTimedLoop, flag, loadAverage as load, ROOT } from './lib.js';
import { processCpuMs as cpuMs } from './server-process.js';

const before = flag('before');
if (before === undefined) throw new Error("--before: the other build's packages/cli/dist/bin.js");
const rounds = Number(flag('rounds') ?? 2);
const seconds = Number(flag('seconds') ?? 4);
const concurrency = Number(flag('concurrency') ?? 16);
const elements = Number(flag('elements') ?? 262_144);
const builds = { before, after: join(ROOT, 'packages/cli/dist/bin.js') };
const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');
const run = promisify(execFile);

/** This checkout's client, closed loop: calls and client CPU per call. */
async function coreWindow(
  url: string,
  ms: number,
): Promise<{ calls: number; itemsPerSec: number; cpuMs: number }> {
  const client = createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000 });
  const data = new Float32Array(elements).fill(1.5);
  const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, elements], data }];
  try {
    for (let i = 0; i < 20; i++) await client.infer('identity', inputs);
    const window = await cpuTimedLoop(concurrency, ms, () => client.infer('identity', inputs));
    return {
      calls: window.calls + 20,
      itemsPerSec: (window.calls * 1000) / window.elapsedMs,
      cpuMs: (window.userMs + window.systemMs) / window.calls,
    };
  } finally {
    await client.close();
  }
}

for (let round = 0; round < rounds; round++) {
  for (const build of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    const child = spawn(
      process.execPath,
      ['--trace-gc', builds[build], 'serve-test', '--port', '0', '--no-llm', '--json'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let markCompacts = 0;
    let scavenges = 0;
    const lines = createInterface({ input: child.stdout });
    const url = await new Promise<string>((resolve) =>
      lines.on('line', (line) => {
        if (line.includes('Mark-Compact')) markCompacts++;
        else if (line.includes('Scavenge')) scavenges++;
        else if (line.startsWith('{')) resolve((JSON.parse(line) as { triton: string }).triton);
      }),
    );
    try {
      // Which client meets the fresh server first alternates with the round: the first one pays
      // its warm-up (code V8 has not optimised yet, pools not grown).
      const clients = existsSync(PYTHON) ? ['core', 'tc_aio'] : ['core'];
      if (Math.floor(round / 2) % 2 === 1) clients.reverse();
      for (const client of clients) {
        const [cpu0, mc0, sc0] = [cpuMs(child.pid as number), markCompacts, scavenges];
        let calls: number;
        let itemsPerSec: number;
        let clientCpu: number;
        if (client === 'core')
          ({ calls, itemsPerSec, cpuMs: clientCpu } = await coreWindow(url, seconds * 1000));
        else {
          const out = await run(PYTHON, [
            join(ROOT, 'bench/suites/unary_tritonclient.py'),
            'aio',
            url,
            'identity',
            String(elements),
            String(concurrency),
            String(seconds),
          ]);
          const result = JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as {
            completed: number;
            elapsedMs: number;
            cpuMs: number;
          };
          calls = result.completed + 20;
          itemsPerSec = (result.completed * 1000) / result.elapsedMs;
          clientCpu = result.cpuMs / result.completed;
        }
        const per100 = (count: number) => Number(((count * 100) / calls).toFixed(1));
        console.log(
          JSON.stringify({
            round,
            server: build,
            client,
            itemsPerSec: Math.round(itemsPerSec),
            serverCpuMsPerCall: Number(((cpuMs(child.pid as number) - cpu0) / calls).toFixed(2)),
            serverMarkCompactsPer100Calls: per100(markCompacts - mc0),
            serverScavengesPer100Calls: per100(scavenges - sc0),
            clientCpuMsPerCall: Number(clientCpu.toFixed(2)),
            load: load(),
          }),
        );
      }
    } finally {
      child.kill('SIGTERM');
    }
  }
}
