// Side-by-side probe of the two non-router parts of `failover_gap_ms` (bench/suites/router.ts), on
// child processes run several ways, interleaved (`--arms`, each kill in the other order than the one
// before): `built` (the chaos server, test/chaos/fixtures/chaos-server.ts, transpiled once, plain
// Node, the packages' dist/), `source` (the same under Node + the tsx loader, the TypeScript
// sources), `bare` (plain Node holding one listening socket and nothing else: the floor for a Node
// server) and `ballast` (`bare` plus `--ballastMiB` of touched memory: whether the dying process's
// memory is what delays its sockets' close) and `cli` (`infergate serve-test --no-llm` from the built
// CLI, plain Node: the reference server as a user runs it, no calls served). Per kill: the child's RSS and threads, then kill -9 →
// a plain TCP connection to it reads end-of-stream ('end') and is closed ('close'), the client
// channel's `ready → idle` (chaos servers only), the child's exit; and for the chaos servers,
// before the kill, the answer time of an idle server's first call (after 1 s of quiet, as the
// survivor b's first call in the failover) and of calls right after it, split with the server's
// own instants (the `ran … @ arrived entered slot done` line): client send → headers read → execute
// entered → slot → done → answer back here. `warm` is `built` whose request path has also served
// `--warmCalls` identity calls (8 at a time) before its second of quiet: against `built` (one call
// before it, as the benchmark's b), whether b's first call after the kill pays for code that is
// cold (run once: interpreted) rather than for a process that was asleep. `warmup` is `built` whose
// model runs its `model_warmup` sample (one row) `--warmupRuns` times when it loads, before the
// server listens: what the reference server's own warm-up does for that first call.
//   node scripts/bootstrap.mjs --dist bench/failover-kill.ts [--kills 10] [--rows 8]
//       [--arms bare,ballast,built,warmup,warm,source,cli] [--ballastMiB 64] [--warmCalls 2000]
//       [--warmupRuns 8]
// Needs built packages for the `built` arm (node scripts/build.mjs).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildInferRequest, createTritonClient } from '@infergate/core';
import { type ServerProcess, startServerProcess } from '../test/chaos/server-process.js';
import { flag, median } from './lib.js';

const kills = Number(flag('kills') ?? 10);
type Arm = 'bare' | 'ballast' | 'built' | 'warmup' | 'warm' | 'source' | 'cli';
const arms = (flag('arms') ?? 'bare,ballast,built,source').split(',') as Arm[];
for (const arm of arms) {
  if (!['bare', 'ballast', 'built', 'warmup', 'warm', 'source', 'cli'].includes(arm))
    throw new Error(`unknown arm '${arm}'`);
}
const ballastMiB = Number(flag('ballastMiB') ?? 64);
const rows = Number(flag('rows') ?? 8);
const warmCalls = Number(flag('warmCalls') ?? 2000);
const warmupRuns = Number(flag('warmupRuns') ?? 8);
const clock = () => Number(process.hrtime.bigint()) / 1e6; // the server's clock too
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The child's resident memory (MiB) and thread count. */
function residency(pid: number | undefined): { rssMiB: number; threads: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return { rssMiB: Math.round(kib / 102.4) / 10, threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1]) };
}

/**
 * A plain Node process holding one listening socket on 127.0.0.1 (reading and dropping what it is
 * sent), with `ballastMiB` of memory allocated and touched first: no HTTP/2, no gRPC, no model.
 */
async function startBare(ballast: number): Promise<{ port: number; child: ReturnType<typeof spawn> }> {
  const script = `globalThis.ballast = Array.from({ length: ${ballast} }, () => Buffer.alloc(1 << 20, 1));
require('node:net').createServer((socket) => socket.resume()).listen(0, '127.0.0.1', function () {
  process.stdout.write('READY ' + this.address().port + '\\n');
});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  process.once('exit', () => child.kill('SIGKILL'));
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const ready = /READY (\d+)/.exec(text);
      if (ready !== null) resolve(Number(ready[1]));
    });
    child.once('exit', (code) => reject(new Error(`bare server exited (${code})`)));
  });
  return { port, child };
}

/** `infergate serve-test --no-llm` from the built CLI (packages/cli/dist), as a user runs it. */
async function startCli(): Promise<{ port: number; child: ReturnType<typeof spawn> }> {
  const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'serve-test', '--port', '0', '--no-llm', '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const line = /^\{.*\}$/m.exec(text);
      if (line !== null)
        resolve(Number((JSON.parse(line[0]) as { triton: string }).triton.split(':').at(-1)));
    });
    child.once('exit', (code) => reject(new Error(`infergate serve-test exited (${code})`)));
  });
  return { port, child };
}

interface Call {
  total: number;
  /** Client send → the server's execute entered (headers read and request decoded). */
  toEnteredFromSend: number;
  toArrived: number;
  toEntered: number;
  toSlot: number;
  slot: number;
  back: number;
}

async function timedCall(
  server: ServerProcess,
  client: ReturnType<typeof createTritonClient>,
  id: number,
): Promise<Call> {
  const request = buildInferRequest('chaos_gpu', [
    { name: 'INPUT0', datatype: 'FP32', shape: [rows, 4], data: new Float32Array(rows * 4).fill(id) },
  ]);
  const seen = server.executions.length;
  const sent = clock();
  await client.grpc.infer(request, {});
  const back = clock();
  // The `ran` line is written before the answer; it may reach this process just after it.
  for (let i = 0; i < 200 && server.executions.length === seen; i++) await sleep(1);
  const run = server.executions[server.executions.length - 1];
  if (run === undefined || server.executions.length === seen) throw new Error('no ran line');
  return {
    total: back - sent,
    toEnteredFromSend: run.entered - sent,
    toArrived: run.arrived - sent,
    toEntered: run.entered - run.arrived,
    toSlot: run.slot - run.entered,
    slot: run.done - run.slot,
    back: back - run.done,
  };
}

interface Trial {
  runtime: Arm;
  rssMiB: number;
  threads: number;
  /** kill → the raw TCP connection read end-of-stream (the kernel closed the child's socket). */
  socketEnd: number;
  /** kill → that connection's 'close' (Node has torn it down after the end). */
  socketClosed: number;
  /** kill → the client channel left `ready` (NaN for the bare arms: no channel). */
  channelLost: number;
  exited: number;
  /** The chaos servers only. */
  firstAfterIdle: Call | undefined;
  next: Call[];
  /** Round trips of an instant model (identity), ms. */
  rpc: number[];
}

/** Connects a plain TCP socket to `port`, kills `child` (kill -9) and times what follows. */
async function killAndTime(
  port: number,
  child: ReturnType<typeof spawn>,
  channel: ReturnType<typeof createTritonClient>['grpc'] | undefined,
): Promise<{ socketEnd: number; socketClosed: number; channelLost: number; exited: number }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  socket.resume(); // read (and drop) what the server sends, so its close is seen
  await sleep(100);
  const at = { socketEnd: Number.NaN, socketClosed: Number.NaN, channelLost: Number.NaN, exited: Number.NaN };
  const kill = performance.now();
  socket.once('end', () => {
    at.socketEnd = performance.now() - kill;
  });
  socket.once('close', () => {
    at.socketClosed = performance.now() - kill;
    if (Number.isNaN(at.socketEnd)) at.socketEnd = at.socketClosed; // reset: no end-of-stream read
  });
  const unwatch = channel?.watchConnectivity((change) => {
    if (change.from === 'ready' && Number.isNaN(at.channelLost)) at.channelLost = performance.now() - kill;
  });
  child.once('exit', () => {
    at.exited = performance.now() - kill;
  });
  child.kill('SIGKILL');
  const waitFor =
    channel === undefined ? (['socketClosed', 'exited'] as const) : (Object.keys(at) as (keyof typeof at)[]);
  for (let i = 0; i < 2_000 && waitFor.some((key) => Number.isNaN(at[key])); i++) await sleep(1);
  unwatch?.();
  socket.destroy();
  return at;
}

async function trial(runtime: Arm): Promise<Trial> {
  if (runtime === 'bare' || runtime === 'ballast' || runtime === 'cli') {
    const { port, child } =
      runtime === 'cli' ? await startCli() : await startBare(runtime === 'bare' ? 0 : ballastMiB);
    const resident = residency(child.pid);
    const at = await killAndTime(port, child, undefined);
    return { runtime, ...resident, ...at, firstAfterIdle: undefined, next: [], rpc: [] };
  }
  const server = await startServerProcess({
    runtime: runtime === 'warm' || runtime === 'warmup' ? 'built' : runtime,
    ...(runtime === 'warmup' ? { warmup: warmupRuns } : {}),
  });
  const client = createTritonClient({ url: server.url, enableGpuIpc: false });
  const identity = buildInferRequest('identity', [
    { name: 'INPUT0', datatype: 'FP32', shape: [16], data: new Float32Array(16) },
  ]);
  try {
    await timedCall(server, client, -1); // connects the channel, warms both sides once
    if (runtime === 'warm') {
      // From a client of its own: only the server's side gets warm (this process's client stays as
      // in the other arms). The server's arrival instants are then off for identity's calls, so
      // this arm reads send → entered as one step.
      const warmer = createTritonClient({ url: server.url, enableGpuIpc: false });
      let left = warmCalls;
      const worker = async () => {
        while (left-- > 0) await warmer.grpc.infer(identity, {});
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      await warmer.close();
    }
    await sleep(1_000); // b is idle for a second before the failover
    const firstAfterIdle = await timedCall(server, client, 0);
    const next: Call[] = [];
    for (let i = 1; i <= 20; i++) next.push(await timedCall(server, client, i));
    const rpc: number[] = [];
    for (let i = 0; i < 20; i++) {
      const sent = clock();
      await client.grpc.infer(identity, {});
      rpc.push(clock() - sent);
    }
    const resident = residency(server.child.pid);
    const at = await killAndTime(server.port, server.child, client.grpc);
    return { runtime, ...resident, ...at, firstAfterIdle, next, rpc };
  } finally {
    await client.close();
    await server.stop();
  }
}

const trials: Trial[] = [];
for (let kill = 0; kill < kills; kill++) {
  for (const runtime of kill % 2 === 0 ? arms : [...arms].reverse()) {
    const result = await trial(runtime);
    trials.push(result);
    const f = result.firstAfterIdle;
    const calls =
      f === undefined
        ? ''
        : `; first call after idle ${f.total.toFixed(1)} (→headers in ${f.toArrived.toFixed(1)}, →entered ${f.toEntered.toFixed(1)}, →slot ${f.toSlot.toFixed(1)}, slot ${f.slot.toFixed(1)}, →back ${f.back.toFixed(1)}); next 20 median ${median(result.next.map((c) => c.total)).toFixed(1)}; identity median ${median(result.rpc).toFixed(1)}`;
    console.log(
      `  ${runtime.padEnd(7)} rss ${result.rssMiB} MiB, ${result.threads} threads, kill → socket end ${result.socketEnd.toFixed(1)}, closed ${result.socketClosed.toFixed(1)}, channel lost ${result.channelLost.toFixed(1)}, exit ${result.exited.toFixed(1)} ms${calls}; load ${loadavg()[0]?.toFixed(1)}`,
    );
  }
}
const fmt = (values: number[]) =>
  `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;
console.log(
  `\nmedians (min–max) over ${kills} kills each, load ${loadavg()
    .map((v) => v.toFixed(1))
    .join(' ')}:`,
);
for (const runtime of arms) {
  const mine = trials.filter((t) => t.runtime === runtime);
  console.log(
    `  ${runtime}: rss ${fmt(mine.map((t) => t.rssMiB))} MiB, ${median(mine.map((t) => t.threads))} threads; kill → socket end ${fmt(mine.map((t) => t.socketEnd))}, closed ${fmt(mine.map((t) => t.socketClosed))}, end → closed ${fmt(mine.map((t) => t.socketClosed - t.socketEnd))}, channel lost ${fmt(mine.map((t) => t.channelLost))}, exit ${fmt(mine.map((t) => t.exited))} ms`,
  );
  if (runtime === 'bare' || runtime === 'ballast' || runtime === 'cli') continue;
  const calls = (pick: (t: Trial) => Call[]) => mine.flatMap(pick);
  const of = (list: Call[], key: keyof Call) => fmt(list.map((c) => c[key]));
  const first = calls((t) => (t.firstAfterIdle === undefined ? [] : [t.firstAfterIdle]));
  const next = calls((t) => t.next);
  for (const [name, list] of [
    ['first call after 1 s idle', first],
    ['next 20 calls', next],
  ] as const) {
    console.log(
      `    ${name} (${rows} rows, model ${(40 + 0.1 * rows).toFixed(1)} ms): total ${of(list, 'total')}; send → entered ${of(list, 'toEnteredFromSend')}; send → headers in ${of(list, 'toArrived')}; → entered ${of(list, 'toEntered')}; entered → slot ${of(list, 'toSlot')}; slot ${of(list, 'slot')}; done → back here ${of(list, 'back')}`,
    );
  }
}
