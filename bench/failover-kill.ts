// Side-by-side probe of the two non-router parts of `failover_gap_ms` (bench/suites/router.ts), on
// the chaos server child (test/chaos/fixtures/chaos-server.ts) run two ways, interleaved:
// `source` (Node + the tsx loader, the packages' TypeScript sources) and `built` (the fixture
// transpiled once, plain Node, the packages' dist/). Per kill: the child's RSS, then kill -9 →
// a plain TCP connection to it closed, the client channel's `ready → idle`, the child's exit; and
// before the kill, the answer time of an idle server's first call (after 1 s of quiet, as the
// survivor b's first call in the failover) and of calls right after it, split with the server's
// own instants (the `ran … @ arrived entered slot done` line): client send → headers read → execute
// entered → slot → done → answer back here.
//   node scripts/bootstrap.mjs --dist bench/failover-kill.ts [--kills 10] [--rows 8]
// Needs built packages for the `built` arm (node scripts/build.mjs).
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { buildInferRequest, createTritonClient } from '@infergate/core';
import { type ServerProcess, startServerProcess } from '../test/chaos/server-process.js';
import { flag, median } from './lib.js';

const kills = Number(flag('kills') ?? 10);
const rows = Number(flag('rows') ?? 8);
const clock = () => Number(process.hrtime.bigint()) / 1e6; // the server's clock too
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return Math.round(kib / 102.4) / 10;
}

interface Call {
  total: number;
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
    toArrived: run.arrived - sent,
    toEntered: run.entered - run.arrived,
    toSlot: run.slot - run.entered,
    slot: run.done - run.slot,
    back: back - run.done,
  };
}

interface Trial {
  runtime: 'source' | 'built';
  rssMiB: number;
  socketClosed: number;
  channelLost: number;
  exited: number;
  firstAfterIdle: Call;
  next: Call[];
  /** Round trips of an instant model (identity), ms. */
  rpc: number[];
}

async function trial(runtime: 'source' | 'built'): Promise<Trial> {
  const server = await startServerProcess({ runtime });
  const client = createTritonClient({ url: server.url, enableGpuIpc: false });
  try {
    await timedCall(server, client, -1); // connects the channel, warms both sides once
    await sleep(1_000); // b is idle for a second before the failover
    const firstAfterIdle = await timedCall(server, client, 0);
    const next: Call[] = [];
    for (let i = 1; i <= 20; i++) next.push(await timedCall(server, client, i));
    const identity = buildInferRequest('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [16], data: new Float32Array(16) },
    ]);
    const rpc: number[] = [];
    for (let i = 0; i < 20; i++) {
      const sent = clock();
      await client.grpc.infer(identity, {});
      rpc.push(clock() - sent);
    }
    const rss = rssMiB(server.child.pid);
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.on('error', () => {});
    socket.resume(); // read (and drop) what the server sends, so its close is seen
    await sleep(100);
    const at = { socketClosed: Number.NaN, channelLost: Number.NaN, exited: Number.NaN };
    const kill = performance.now();
    socket.once('close', () => {
      at.socketClosed = performance.now() - kill;
    });
    const unwatch = client.grpc.watchConnectivity((change) => {
      if (change.from === 'ready' && Number.isNaN(at.channelLost)) at.channelLost = performance.now() - kill;
    });
    server.child.once('exit', () => {
      at.exited = performance.now() - kill;
    });
    server.child.kill('SIGKILL');
    for (let i = 0; i < 2_000 && Object.values(at).some(Number.isNaN); i++) await sleep(1);
    unwatch();
    socket.destroy();
    return { runtime, rssMiB: rss, ...at, firstAfterIdle, next, rpc };
  } finally {
    await client.close();
    await server.stop();
  }
}

const trials: Trial[] = [];
for (let kill = 0; kill < kills; kill++) {
  for (const runtime of kill % 2 === 0 ? (['source', 'built'] as const) : (['built', 'source'] as const)) {
    const result = await trial(runtime);
    trials.push(result);
    const f = result.firstAfterIdle;
    console.log(
      `  ${runtime.padEnd(6)} rss ${result.rssMiB} MiB, kill → socket closed ${result.socketClosed.toFixed(1)}, channel lost ${result.channelLost.toFixed(1)}, exit ${result.exited.toFixed(1)} ms; first call after idle ${f.total.toFixed(1)} (→headers in ${f.toArrived.toFixed(1)}, →entered ${f.toEntered.toFixed(1)}, →slot ${f.toSlot.toFixed(1)}, slot ${f.slot.toFixed(1)}, →back ${f.back.toFixed(1)}); next 20 median ${median(result.next.map((c) => c.total)).toFixed(1)}; identity median ${median(result.rpc).toFixed(1)}; load ${loadavg()[0]?.toFixed(1)}`,
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
for (const runtime of ['source', 'built'] as const) {
  const mine = trials.filter((t) => t.runtime === runtime);
  const calls = (pick: (t: Trial) => Call[]) => mine.flatMap(pick);
  const of = (list: Call[], key: keyof Call) => fmt(list.map((c) => c[key]));
  const first = calls((t) => [t.firstAfterIdle]);
  const next = calls((t) => t.next);
  console.log(
    `  ${runtime}: rss ${fmt(mine.map((t) => t.rssMiB))} MiB; kill → socket closed ${fmt(mine.map((t) => t.socketClosed))}, channel lost ${fmt(mine.map((t) => t.channelLost))}, exit ${fmt(mine.map((t) => t.exited))} ms`,
  );
  for (const [name, list] of [
    ['first call after 1 s idle', first],
    ['next 20 calls', next],
  ] as const) {
    console.log(
      `    ${name} (${rows} rows, model ${(40 + 0.1 * rows).toFixed(1)} ms): total ${of(list, 'total')}; send → headers in ${of(list, 'toArrived')}; → entered ${of(list, 'toEntered')}; entered → slot ${of(list, 'toSlot')}; slot ${of(list, 'slot')}; done → back here ${of(list, 'back')}`,
    );
  }
}
