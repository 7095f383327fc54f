// Garbage collection per call at 1 MiB, grpc-js engine against http2 engine, side by side: the
// reference server in its own process, identity FP32 [1,262144], 16 callers, 200 calls per arm per
// round, 3 rounds with the arms' order alternated, after a warm-up. Prints, per engine and round, GC
// pause ms per call and GC events per call (PerformanceObserver 'gc' entries), major ones apart. The
// event count depends less on machine load than the pause time does.
//   node_modules/.bin/tsx --conditions=@infergate/source bench/gc-per-call.ts
//        [--compare packages/core/.tmp/index-before.js]
// --compare replaces the grpc-js arm with `http2_before`: the http2 engine of another ESM build of
// core (a copy of packages/core/dist/index.js saved before a change, kept inside packages/core).

import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createTritonClient } from '@infergate/core';
import { flag, ROOT } from './lib.js';
import { startServerProcess } from './server-process.js';

let gcMs = 0;
let gcEvents = 0;
let majorEvents = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMs += entry.duration;
    gcEvents++;
    const detail = (entry as { detail?: { kind?: number } }).detail;
    if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorEvents++;
  }
}).observe({ entryTypes: ['gc'] });

const compare = flag('compare');
const ENGINES =
  compare === undefined ? (['grpc-js', 'http2'] as const) : (['http2_before', 'http2'] as const);
type Engine = (typeof ENGINES)[number];
const CALLS = 200;

const server = await startServerProcess();
const data = new Float32Array(262_144).fill(1.5);
const before =
  compare === undefined
    ? undefined
    : (
        (await import(pathToFileURL(join(ROOT, compare)).href)) as {
          createTritonClient: typeof createTritonClient;
        }
      ).createTritonClient;
const clients: Partial<Record<Engine, ReturnType<typeof createTritonClient>>> = {
  http2: createTritonClient({ url: server.url, enableGpuIpc: false, engine: 'http2' }),
};
if (before === undefined)
  clients['grpc-js'] = createTritonClient({ url: server.url, enableGpuIpc: false, engine: 'grpc-js' });
else clients.http2_before = before({ url: server.url, enableGpuIpc: false, engine: 'http2' });

async function run(engine: Engine, calls: number, concurrency: number): Promise<void> {
  let left = calls;
  const caller = async () => {
    while (left-- > 0)
      await clients[engine]?.infer('identity', [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 262_144], data },
      ]);
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
}

// GC entries arrive asynchronously: a short pause lets the observer catch up before each reading.
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

try {
  for (const engine of ENGINES) await run(engine, 50, 4);
  const rows: {
    round: number;
    engine: Engine;
    gcMsPerCall: number;
    gcEventsPerCall: number;
    majorGcEventsPerCall: number;
  }[] = [];
  for (let round = 0; round < 3; round++) {
    for (const engine of round % 2 === 0 ? ENGINES : [...ENGINES].reverse()) {
      await settle();
      const [ms, events, major] = [gcMs, gcEvents, majorEvents];
      await run(engine, CALLS, 16);
      await settle();
      rows.push({
        round,
        engine,
        gcMsPerCall: (gcMs - ms) / CALLS,
        gcEventsPerCall: (gcEvents - events) / CALLS,
        majorGcEventsPerCall: (majorEvents - major) / CALLS,
      });
    }
  }
  console.table(rows);
} finally {
  for (const client of Object.values(clients)) await client?.close();
  server.child.kill();
}
