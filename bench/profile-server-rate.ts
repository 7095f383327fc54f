// The reference server's CPU per 1 MiB call at the SAME offered rate for each client, so that what a
// client's way of sending costs the server is not mixed up with how fast that client goes. In a
// closed loop the arm that runs slower also shows a dearer server per call (work the server does per
// second, whatever the rate, spread over fewer calls), and the machine's other load moves both.
// Here each arm sends `--rate` calls a second (open loop, at most `--max-in-flight` outstanding,
// the schedule kept whatever the latency), one window each, their order rotated each round, against
// one server process (`infergate serve-test`). Prints per window: the rate reached, the server's CPU
// per call (/proc) and the client's. An arm that cannot keep the rate says so (`reached` below it).
// The server is warmed up first (3 s closed loop at --max-in-flight).
//   node scripts/bootstrap.mjs --dist bench/profile-server-rate.ts [--arms core,tc_aio] [--rate 150]
//        [--seconds 5] [--rounds 4] [--elements 262144] [--max-in-flight 64] [--server OTHER/bin.js]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createTritonClient } from '@infergate/core';
import { flag, loadAverage as load, ROOT } from './lib.js';
import { processCpuMs as cpuOf } from './server-process.js';

const arms = (flag('arms') ?? 'core,tc_aio').split(',');
const rate = Number(flag('rate') ?? 150);
const seconds = Number(flag('seconds') ?? 5);
const rounds = Number(flag('rounds') ?? 4);
const elements = Number(flag('elements') ?? 262_144);
const maxInFlight = Number(flag('max-in-flight') ?? 64);
const serverBin = flag('server') ?? join(ROOT, 'packages/cli/dist/bin.js');
const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');

interface Window {
  completed: number;
  elapsedMs: number;
  cpuMs: number;
}

// tritonclient.grpc.aio on the same schedule: warm-up outside the window, its CPU over the window.
const PYTHON_RATE = `
import asyncio, json, sys, time
import numpy as np
import tritonclient.grpc.aio as grpcaio
async def main(url, elements, rate, seconds, limit):
    client = grpcaio.InferenceServerClient(url)
    tensor = grpcaio.InferInput("INPUT0", [1, elements], "FP32")
    tensor.set_data_from_numpy(np.random.rand(1, elements).astype(np.float32))
    for _ in range(20):
        await client.infer("identity", [tensor])
    gate = asyncio.Semaphore(limit)
    done = 0
    async def one():
        nonlocal done
        async with gate:
            await client.infer("identity", [tensor])
            done += 1
    print("warm", flush=True)
    sys.stdin.readline()
    cpu = time.process_time()
    start = time.perf_counter()
    tasks = []
    for i in range(int(rate * seconds)):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one()))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    print(json.dumps({"completed": done, "elapsedMs": elapsed * 1000, "cpuMs": (time.process_time() - cpu) * 1000}))
    await client.close()
asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])))
`;

/** This checkout's client on the schedule (in this process: its CPU is this process's). */
async function coreWindow(url: string, onStart: () => void): Promise<Window> {
  const client = createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000 });
  const data = new Float32Array(elements).fill(1.5);
  const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, elements], data }];
  try {
    for (let i = 0; i < 20; i++) await client.infer('identity', inputs);
    onStart();
    const cpu = process.cpuUsage();
    const start = performance.now();
    let inFlight = 0;
    let completed = 0;
    const waiting: (() => void)[] = [];
    const calls: Promise<void>[] = [];
    for (let i = 0; i < Math.round(rate * seconds); i++) {
      const delay = start + (i * 1000) / rate - performance.now();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      while (inFlight >= maxInFlight) await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight++;
      calls.push(
        client.infer('identity', inputs).then(() => {
          completed++;
          inFlight--;
          waiting.shift()?.();
        }),
      );
    }
    await Promise.all(calls);
    const used = process.cpuUsage(cpu);
    return { completed, elapsedMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    await client.close();
  }
}

async function pythonWindow(url: string, onStart: () => void): Promise<Window> {
  const child = spawn(PYTHON, [
    '-c',
    PYTHON_RATE,
    url,
    String(elements),
    String(rate),
    String(seconds),
    String(maxInFlight),
  ]);
  const lines = createInterface({ input: child.stdout });
  let result: Window | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tc_aio exited ${code}`))));
  });
  lines.on('line', (line) => {
    if (line === 'warm') {
      // The window starts once its warm-up is over, for the server's CPU as for the client's.
      onStart();
      child.stdin.write('\n');
    } else if (line.startsWith('{')) result = JSON.parse(line) as Window;
  });
  await ended;
  if (result === undefined) throw new Error('tc_aio printed no result');
  return result;
}

if (arms.includes('tc_aio') && !existsSync(PYTHON)) throw new Error(`tc_aio needs ${PYTHON}`);
const server = spawn(process.execPath, [serverBin, 'serve-test', '--port', '0', '--no-llm', '--json'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve) => {
  createInterface({ input: server.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    if (line.startsWith('{"triton"')) resolve((JSON.parse(line) as { triton: string }).triton);
  });
});
const pid = server.pid as number;
try {
  // A fresh server's first calls cost it more (JIT, its request memory pool's first blocks, heap
  // growth): whichever arm went first paid for them (6 of 6 paired runs at c64). Warm it first.
  {
    const client = createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000 });
    const data = new Float32Array(elements).fill(1.5);
    const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, elements], data }];
    const end = performance.now() + 3000;
    await Promise.all(
      Array.from({ length: maxInFlight }, async () => {
        while (performance.now() < end) await client.infer('identity', inputs);
      }),
    );
    await client.close();
  }
  for (let round = 0; round < rounds; round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      let before = 0;
      const onStart = () => {
        before = cpuOf(pid);
      };
      const window = arm === 'tc_aio' ? await pythonWindow(url, onStart) : await coreWindow(url, onStart);
      const serverMs = cpuOf(pid) - before;
      console.log(
        JSON.stringify({
          round,
          arm,
          rate,
          reached: Math.round((window.completed * 1000) / window.elapsedMs),
          serverCpuMsPerCall: Number((serverMs / window.completed).toFixed(2)),
          clientCpuMsPerCall: Number((window.cpuMs / window.completed).toFixed(2)),
          load: load(),
        }),
      );
    }
  }
} finally {
  server.kill('SIGTERM');
}
