// What one call costs the client process in garbage and CPU, this build against another (main's)
// side by side in one process: bytes allocated per call, GC events per call and client CPU per call,
// on two paths against the reference server in its own process:
// - unary: `client.infer` at FP32 [1,16] on `identity`, 16 closed-loop callers (the default engine);
// - batcher_c64: the batcher suite's adaptive arm at c64 on `simulated_gpu` (the front client over
//   `createMicroBatcher` over the base client's gRPC transport): each caller's share of its request,
//   the batch's assembly, its answer's decode and split, and the hand-out.
// Per round and build, the builds' order alternated each round: an unprofiled window (CPU per call
// from `process.cpuUsage`, GC events from PerformanceObserver 'gc' entries); after all of those, per
// round and build a window under V8's sampling heap profiler with the objects that minor and major
// GCs collected kept (every allocation counts, not only what survives; sampled every 64 bytes). The
// heap profile's top functions by self bytes per call are printed for the last round, and with --cpu
// a CPU profile's top functions by self time per call.
//   node scripts/bootstrap.mjs --dist bench/gc-alloc-per-call.ts [--compare main] [--rounds 3]
//        [--calls 20000] [--top 14] [--cpu] [--parents FUNCTION]
// --compare NAME: the other build is packages/core/.tmp/NAME/index.js and
// packages/batcher/.tmp/NAME/index.js (copies of the dist/ files of a build of main, the batcher's
// import of '@infergate/core' rewritten to the core copy beside it), saved before a change:
//   mkdir -p packages/core/.tmp/main packages/batcher/.tmp/main && cp packages/core/dist/*.js packages/core/.tmp/main/
//   sed "s#from '@infergate/core'#from '../../../core/.tmp/main/index.js'#" packages/batcher/dist/index.js > packages/batcher/.tmp/main/index.js
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import * as thisBatcher from '@infergate/batcher';
import * as thisCore from '@infergate/core';
import { flag, median, ROOT } from './lib.js';
import { startServerProcess } from './server-process.js';

type Core = Pick<typeof thisCore, 'createTritonClient'>;
type Batcher = Pick<typeof thisBatcher, 'createMicroBatcher'>;
interface Build {
  name: string;
  core: Core;
  batcher: Batcher;
}

const compare = flag('compare');
const rounds = Number(flag('rounds') ?? 3);
const calls = Number(flag('calls') ?? 20_000);
const top = Number(flag('top') ?? 14);
const withCpu = process.argv.includes('--cpu');
const parentsOf = flag('parents');

const builds: Build[] = [{ name: 'this', core: thisCore, batcher: thisBatcher }];
if (compare !== undefined) {
  const load = async (pkg: string) =>
    import(pathToFileURL(join(ROOT, 'packages', pkg, '.tmp', compare, 'index.js')).href);
  builds.unshift({ name: compare, core: await load('core'), batcher: await load('batcher') });
}

let gcEvents = 0;
new PerformanceObserver((list) => {
  gcEvents += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });
// GC entries arrive asynchronously: a short pause lets the observer catch up before each reading.
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

interface Path {
  /** Runs `count` calls; resolves when all are answered. */
  run(count: number): Promise<void>;
  close(): Promise<void>;
}

const ring = new Float32Array(16 * 1024);
for (let index = 0; index < ring.length; index++) ring[index] = index % 7;
let nextRow = 0;
/** An input row: a view of a preallocated ring, so the harness allocates only the call's literal. */
const row = () => {
  const offset = (nextRow++ % 1024) * 16;
  return ring.subarray(offset, offset + 16);
};

async function closedLoop(count: number, concurrency: number, call: () => Promise<unknown>): Promise<void> {
  let left = count;
  const caller = async () => {
    while (left-- > 0) await call();
  };
  const callers: Promise<void>[] = [];
  for (let index = 0; index < concurrency; index++) callers.push(caller());
  await Promise.all(callers);
}

function unaryPath(build: Build, url: string): Path {
  const client = build.core.createTritonClient({ url, enableGpuIpc: false });
  return {
    run: (count) =>
      closedLoop(count, 16, () =>
        client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: row() }]),
      ),
    close: () => client.close(),
  };
}

function batcherPath(build: Build, url: string): Path {
  const base = build.core.createTritonClient({ url, enableGpuIpc: false });
  const batcher = build.batcher.createMicroBatcher(base.grpc, { client: base, flush: 'adaptive' });
  const client = build.core.createTritonClient({ url, enableGpuIpc: false, transport: batcher });
  return {
    run: (count) =>
      closedLoop(count, 64, () =>
        client.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: row() }]),
      ),
    close: async () => {
      await batcher.close();
      await client.close();
      await base.close();
    },
  };
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize?: number;
  hitCount?: number;
  id?: number;
  children: (ProfileNode | number)[];
}

const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('Profiler.enable');

function frameKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.split('/').slice(-3).join('/');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

async function heapWindow(path: Path): Promise<{ bytesPerCall: number; bySelf: Map<string, number> }> {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await path.run(calls);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode };
  };
  const bySelf = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, parent: string) => {
    const key = frameKey(node);
    const sdkFrame = /\/dist\/|\.tmp\//.test(node.callFrame.url) ? key : parent;
    bySelf.set(key, (bySelf.get(key) ?? 0) + (node.selfSize ?? 0));
    // With --parents NAME: bytes of frames named NAME by the nearest SDK frame that called them.
    if (parentsOf !== undefined && key.startsWith(`${parentsOf} `) && (node.selfSize ?? 0) > 0) {
      const edge = `${parentsOf} ← ${parent}`;
      bySelf.set(edge, (bySelf.get(edge) ?? 0) + (node.selfSize ?? 0));
    }
    total += node.selfSize ?? 0;
    for (const child of node.children) walk(child as ProfileNode, sdkFrame);
  };
  walk(profile.head, '(root)');
  for (const [key, bytes] of bySelf) bySelf.set(key, bytes / calls);
  return { bytesPerCall: total / calls, bySelf };
}

async function cpuWindow(path: Path): Promise<Map<string, number>> {
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  await path.run(calls);
  const { profile } = (await session.post('Profiler.stop')) as unknown as {
    profile: { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[] };
  };
  const usPerSample = (profile.endTime - profile.startTime) / profile.samples.length;
  const bySelf = new Map<string, number>();
  for (const node of profile.nodes) {
    const key = frameKey(node);
    bySelf.set(key, (bySelf.get(key) ?? 0) + ((node.hitCount ?? 0) * usPerSample) / calls);
  }
  return bySelf;
}

function printTop(title: string, bySelf: Map<string, number>, unit: string, digits: number): void {
  console.log(`\n${title}`);
  for (const [key, value] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${value.toFixed(digits).padStart(8)} ${unit}  ${key}`);
  }
}

interface Row {
  path: string;
  round: number;
  build: string;
  bytesPerCall: number;
  gcPer1kCalls: number;
  cpuUsPerCall: number;
}

const server = await startServerProcess();
const rows: Row[] = [];
const paths = [
  { name: 'unary', make: unaryPath },
  { name: 'batcher_c64', make: batcherPath },
];
try {
  for (const { name, make } of paths) {
    const opened = builds.map((build) => ({ build, path: make(build, server.url) }));
    for (const { path } of opened) await path.run(calls / 2); // warm up: optimised code, the lane learned
    // Timed windows first, all rounds (the heap profiler's windows slow what runs after them).
    const timed = new Map<string, { gcPer1kCalls: number; cpuUsPerCall: number }[]>();
    for (let round = 0; round < rounds; round++) {
      for (const { build, path } of round % 2 === 0 ? opened : [...opened].reverse()) {
        await settle();
        const events = gcEvents;
        const cpu = process.cpuUsage();
        await path.run(calls);
        const used = process.cpuUsage(cpu);
        await settle();
        const list = timed.get(build.name) ?? [];
        list.push({
          gcPer1kCalls: (1000 * (gcEvents - events)) / calls,
          cpuUsPerCall: (used.user + used.system) / calls,
        });
        timed.set(build.name, list);
      }
    }
    const lastProfiles = new Map<string, Map<string, number>>();
    for (let round = 0; round < rounds; round++) {
      for (const { build, path } of round % 2 === 0 ? opened : [...opened].reverse()) {
        const { bytesPerCall, bySelf } = await heapWindow(path);
        lastProfiles.set(build.name, bySelf);
        const window = (timed.get(build.name) ?? [])[round];
        rows.push({
          path: name,
          round,
          build: build.name,
          bytesPerCall: Math.round(bytesPerCall),
          gcPer1kCalls: Number((window?.gcPer1kCalls ?? Number.NaN).toFixed(3)),
          cpuUsPerCall: Number((window?.cpuUsPerCall ?? Number.NaN).toFixed(2)),
        });
      }
    }
    for (const [build, bySelf] of lastProfiles)
      printTop(`${name}, ${build}: bytes per call by function (self)`, bySelf, 'B', 0);
    if (withCpu) {
      for (const { build, path } of opened)
        printTop(
          `${name}, ${build.name}: CPU µs per call by function (self, profiled)`,
          await cpuWindow(path),
          'µs',
          2,
        );
    }
    for (const { path } of opened) await path.close();
  }
  console.log();
  console.table(rows);
  console.log('medians:');
  for (const { name } of paths) {
    for (const build of builds) {
      const mine = rows.filter((row) => row.path === name && row.build === build.name);
      console.log(
        `  ${name} ${build.name}: ${median(mine.map((row) => row.bytesPerCall)).toFixed(0)} B/call, ${median(mine.map((row) => row.gcPer1kCalls)).toFixed(2)} GC per 1k calls, ${median(mine.map((row) => row.cpuUsPerCall)).toFixed(2)} µs CPU/call`,
      );
    }
  }
} finally {
  session.disconnect();
  server.child.kill();
}
