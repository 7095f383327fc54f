// Suite `unary`: one inference on `identity` (FP32 [1,16] and [1,262144] = 1 MiB), closed loop at
// c1/c16/c64, against the reference server in its OWN process (so the client's cost is not hidden by
// a shared event loop). Arms, interleaved in one run with their order rotated each round:
//   core         @infergate/core (enableGpuIpc: false), the default engine (http2 since decision 0017)
//   core_tuned   the same with grpc-js channel options tuned (channelz and retries off)
//   core_h2      the same with engine: 'http2' named (the default's own code: the spread between
//                core and core_h2 is the run's noise unless --engine grpc-js)
//   core_h2_now, core_h2_immediate
//                the http2 engine writing each request at once, or holding writes to the next
//                setImmediate (as node:http2 does), where the engine holds them until the microtask
//                queue drains; only when named in --arms, to compare write policies
//   floor        bare @grpc/grpc-js sending the same pre-encoded request bytes, no decoding
//   tc_aio       NVIDIA's tritonclient.grpc.aio (interop venv), one process per window
//   tc_sync      tritonclient.grpc with one thread and client per caller (for information)
// Per cell: medians over rounds of items/s, p50, p99 and client CPU per call.
//   pnpm bench unary [--seconds 2] [--rounds 3] [--url HOST:PORT] [--no-python] [--engine grpc-js|http2]
//                    [--arms core_h2,floor,tc_aio] [--sizes 16,1MiB] [--concurrency 16,64]
//                    [--compare packages/core/.tmp/index-before.js]
// (--compare adds the arm core_h2_before: the http2 engine from another ESM build of core, e.g. a
// copy of packages/core/dist/index.js saved before a change, measured side by side with this one;
// keep the copy inside packages/core, so its imports resolve, and out of dist/, which builds clean.)
// (--engine sets what the `core` arm, and so the named core_* figures, use; --arms/--sizes/
// --concurrency narrow the run for profiling work, and the figures they leave out are not written.)
// With the server in its own process, each cell also records the SERVER's CPU per call: what a
// client's way of sending costs the process that shares the machine with it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { buildInferRequest, createTritonClient } from '@infergate/core';
import { summarizeLatencies } from '../../packages/cli/src/perf/latency-summary.js';
import { closedLoopWindow, type WindowSample } from '../../packages/cli/src/perf/load-window.js';
import { serializeInferRequest, toModelInferRequest } from '../../packages/core/src/internal/infer-wire.js';
import { BENCH_DIR, type BenchCase, flag, median, packageVersion, ROOT, report } from '../lib.js';
import { startServerProcess } from '../server-process.js';

const SIZES = [
  { label: '', elements: 16 },
  { label: '1MiB_', elements: 262_144 },
] as const;
const CONCURRENCIES = [1, 16, 64];
const ARMS = [
  'core',
  'core_tuned',
  'core_h2',
  'core_h2_now',
  'core_h2_immediate',
  'core_h2_before',
  'floor',
  'tc_aio',
  'tc_sync',
] as const;
/** Arms run only when --arms names them. */
const OPT_IN_ARMS: readonly Arm[] = ['core_h2_now', 'core_h2_immediate'];
type Arm = (typeof ARMS)[number];
const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');
const SCRIPT = join(ROOT, 'bench/suites/unary_tritonclient.py');
const INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

/** The few grpc-js members the floor uses (grpc-js is core's dependency, not the bench's). */
interface BareClient {
  makeUnaryRequest(
    path: string,
    serialize: (value: Buffer) => Buffer,
    deserialize: (value: Buffer) => Buffer,
    argument: Buffer,
    callback: (error: Error | null, value?: Buffer) => void,
  ): unknown;
  close(): void;
}
interface GrpcModule {
  Client: new (address: string, credentials: unknown) => BareClient;
  credentials: { createInsecure(): unknown };
}

interface Measured {
  calls: number;
  itemsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerCall: number;
  /** Node arms: garbage-collection pause time per call (PerformanceObserver 'gc' entries). */
  gcMsPerCall?: number;
  /** Node arms: calls that failed in the window (not in items/s or the latencies). */
  errors?: number;
  /** The reference server's CPU per call in the window (own-process server only). */
  serverCpuMsPerCall?: number;
}

/** Linux: CPU ms (user + system) used so far by `pid` and its descendants (tsx runs the server in a child). */
function treeCpuMs(pid: number): number {
  let total = 0;
  const visit = (id: number) => {
    try {
      // Fields after the parenthesised command: state is [0], utime [11], stime [12] (clock ticks).
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      const children = readFileSync(`/proc/${id}/task/${id}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) visit(Number(child));
    } catch {
      // Not Linux, or the process is gone: no server figure.
    }
  };
  visit(pid);
  return total;
}

/** Total GC pause time seen so far in this process, ms. */
let gcTotalMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcTotalMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** A Node arm's window, with its GC time per call. */
async function nodeWindow(call: () => Promise<unknown>, concurrency: number, ms: number): Promise<Measured> {
  const gcBefore = gcTotalMs;
  const sample = await closedLoopWindow(call, concurrency, ms);
  // Entries arrive asynchronously: let the observer catch up before reading the total.
  await new Promise((resolve) => setImmediate(resolve));
  if (sample.errors > 0) console.warn(`  ${sample.errors} calls failed: ${sample.firstError}`);
  return {
    ...fromSample(sample),
    gcMsPerCall: (gcTotalMs - gcBefore) / Math.max(1, sample.completed),
    errors: sample.errors,
  };
}

function fromSample(sample: WindowSample): Measured {
  const latency = summarizeLatencies(sample.latencies);
  return {
    calls: sample.completed,
    itemsPerSec: (sample.completed * 1000) / sample.elapsedMs,
    p50Ms: latency.p50Ms,
    p99Ms: latency.p99Ms,
    cpuMsPerCall: sample.cpuMs / sample.completed,
  };
}

function python(
  mode: 'aio' | 'sync',
  url: string,
  elements: number,
  concurrency: number,
  seconds: number,
): Measured {
  const run = spawnSync(
    PYTHON,
    [SCRIPT, mode, url, 'identity', String(elements), String(concurrency), String(seconds)],
    { encoding: 'utf8', timeout: (seconds + 60) * 1000 },
  );
  if (run.status !== 0) throw new Error(`tritonclient ${mode} failed: ${run.stderr || run.error?.message}`);
  const out = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as {
    completed: number;
    elapsedMs: number;
    cpuMs: number;
    p50Ms: number;
    p99Ms: number;
  };
  return {
    calls: out.completed,
    itemsPerSec: (out.completed * 1000) / out.elapsedMs,
    p50Ms: out.p50Ms,
    p99Ms: out.p99Ms,
    cpuMsPerCall: out.cpuMs / out.completed,
  };
}

const ARM_COLORS: Record<Arm, string> = {
  core: '#1f77b4',
  core_tuned: '#9ecae1',
  core_h2: '#d62728',
  core_h2_now: '#e377c2',
  core_h2_immediate: '#f7b6d2',
  core_h2_before: '#ff9896',
  floor: '#7f7f7f',
  tc_aio: '#76b900',
  tc_sync: '#c5e59a',
};

/** Grouped bars of items/s per cell, one panel per tensor size (each with its own scale). */
export function unaryChartSvg(cases: readonly BenchCase[]): string {
  const width = 720;
  const panelH = 200;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${2 * panelH + 60}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${2 * panelH + 60}" fill="#ffffff"/>`,
  ];
  SIZES.forEach((size, panel) => {
    const top = 30 + panel * (panelH + 10);
    const cells = CONCURRENCIES.map((c) => `${size.label}c${c}`);
    const rows = cases.filter((entry) => cells.includes(entry.load));
    const max = Math.max(1, ...rows.map((entry) => entry.itemsPerSec ?? 0));
    const plotH = panelH - 40;
    const groupW = (width - 160) / cells.length;
    const barW = (groupW - 20) / ARMS.length;
    parts.push(
      `<text x="60" y="${top}" font-size="13">identity ${size.label ? 'FP32 [1,262144] (1 MiB)' : 'FP32 [1,16]'}: items/s (max ${Math.round(max)})</text>`,
      `<line x1="60" y1="${top + 10 + plotH}" x2="${width - 100}" y2="${top + 10 + plotH}" stroke="#000"/>`,
    );
    cells.forEach((cell, group) => {
      const x0 = 70 + group * groupW;
      ARMS.forEach((arm, index) => {
        const value = rows.find((entry) => entry.load === cell && entry.arm === arm)?.itemsPerSec ?? 0;
        const h = (value / max) * plotH;
        const x = x0 + index * barW;
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${(top + 10 + plotH - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${ARM_COLORS[arm]}"/>`,
          `<text x="${(x + barW / 2).toFixed(1)}" y="${(top + 6 + plotH - h).toFixed(1)}" text-anchor="middle" font-size="9">${Math.round(value)}</text>`,
        );
      });
      parts.push(
        `<text x="${(x0 + (groupW - 20) / 2).toFixed(1)}" y="${top + plotH + 24}" text-anchor="middle">c${CONCURRENCIES[group]}</text>`,
      );
    });
  });
  ARMS.forEach((arm, index) => {
    const y = 50 + index * 18;
    parts.push(
      `<rect x="${width - 90}" y="${y - 9}" width="12" height="12" fill="${ARM_COLORS[arm]}"/>`,
      `<text x="${width - 72}" y="${y + 1}">${arm}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export async function run(): Promise<void> {
  const seconds = Number(flag('seconds') ?? 2);
  const onlyArms = flag('arms')?.split(',');
  const onlySizes = flag('sizes')?.split(',');
  const concurrencies = flag('concurrency')?.split(',').map(Number) ?? CONCURRENCIES;
  const rounds = Number(flag('rounds') ?? 3);
  const withPython = !process.argv.includes('--no-python') && existsSync(PYTHON);
  const given = flag('url');
  const server = given === undefined ? await startServerProcess() : undefined;
  const url = given ?? (server?.url as string);
  const grpc = createRequire(join(ROOT, 'packages/core/package.json'))('@grpc/grpc-js') as GrpcModule;
  const engineFlag = flag('engine');
  const engine = engineFlag === 'grpc-js' || engineFlag === 'http2' ? engineFlag : undefined;
  const core = createTritonClient({
    url,
    enableGpuIpc: false,
    timeoutMs: 60_000,
    ...(engine === undefined ? {} : { engine }),
  });
  const coreTuned = createTritonClient({
    url,
    enableGpuIpc: false,
    timeoutMs: 60_000,
    engine: 'grpc-js',
    channelOptions: {
      'grpc.enable_channelz': 0,
      'grpc.enable_retries': 0,
      'grpc.per_rpc_retry_buffer_size': 0,
    },
  });
  const coreH2 = createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000, engine: 'http2' });
  /** The http2 engine with another write policy (an internal switch read when a client is made). */
  const withPolicy = (policy: 'now' | 'immediate') => {
    process.env.INFERGATE_H2_WRITE_POLICY = policy;
    try {
      return createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000, engine: 'http2' });
    } finally {
      delete process.env.INFERGATE_H2_WRITE_POLICY;
    }
  };
  const coreNow = withPolicy('now');
  const coreImmediate = withPolicy('immediate');
  const bare = new grpc.Client(url, grpc.credentials.createInsecure());
  const compare = flag('compare');
  const arms: Arm[] = ARMS.filter(
    (arm) =>
      (withPython || !arm.startsWith('tc_')) &&
      (compare !== undefined || arm !== 'core_h2_before') &&
      (OPT_IN_ARMS.includes(arm)
        ? onlyArms?.includes(arm) === true
        : onlyArms === undefined || onlyArms.includes(arm) || arm === 'core_h2_before'),
  );
  const before =
    compare === undefined
      ? undefined
      : (
          (await import(pathToFileURL(join(ROOT, compare)).href)) as {
            createTritonClient: typeof createTritonClient;
          }
        ).createTritonClient({ url, enableGpuIpc: false, timeoutMs: 60_000, engine: 'http2' });
  const sizes = SIZES.filter(
    (size) => onlySizes === undefined || onlySizes.includes(size.label ? '1MiB' : String(size.elements)),
  );
  const serverPid = server?.child.pid;
  const cells = new Map<string, Measured[]>();
  const cases: BenchCase[] = [];
  const ratios: Record<string, number> = {};
  try {
    const serverName = (await core.serverMetadata()).name;
    for (const size of sizes) {
      const data = Float32Array.from({ length: size.elements }, () => Math.random());
      const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, size.elements], data }];
      const request = buildInferRequest('identity', inputs);
      const bytes = serializeInferRequest(
        toModelInferRequest(request),
        request.inputs.map((input) => ('raw' in input ? (input.raw as Uint8Array) : new Uint8Array())),
      );
      const coreCall = () => core.infer('identity', inputs);
      const tunedCall = () => coreTuned.infer('identity', inputs);
      const h2Call = () => coreH2.infer('identity', inputs);
      const nowCall = () => coreNow.infer('identity', inputs);
      const immediateCall = () => coreImmediate.infer('identity', inputs);
      const beforeCall = () => before?.infer('identity', inputs) as Promise<unknown>;
      const floorCall = () =>
        new Promise<Buffer>((resolve, reject) => {
          bare.makeUnaryRequest(
            INFER_PATH,
            (value) => value,
            (value) => value,
            bytes,
            (error, value) => (error ? reject(error) : resolve(value as Buffer)),
          );
        });
      // Warm-up: connections, JIT, the server's first calls.
      const warm = {
        core: coreCall,
        core_tuned: tunedCall,
        core_h2: h2Call,
        core_h2_now: nowCall,
        core_h2_immediate: immediateCall,
        core_h2_before: beforeCall,
        floor: floorCall,
      };
      for (const [arm, call] of Object.entries(warm)) {
        if (arms.includes(arm as Arm)) await closedLoopWindow(call, 16, 500);
      }
      for (const concurrency of concurrencies) {
        for (let round = 0; round < rounds; round++) {
          const order = arms.map((_, index) => arms[(index + round) % arms.length] as Arm);
          for (const arm of order) {
            let measured: Measured;
            const serverBefore = serverPid === undefined ? 0 : treeCpuMs(serverPid);
            if (arm === 'core') measured = await nodeWindow(coreCall, concurrency, seconds * 1000);
            else if (arm === 'core_tuned')
              measured = await nodeWindow(tunedCall, concurrency, seconds * 1000);
            else if (arm === 'core_h2') measured = await nodeWindow(h2Call, concurrency, seconds * 1000);
            else if (arm === 'core_h2_now') measured = await nodeWindow(nowCall, concurrency, seconds * 1000);
            else if (arm === 'core_h2_immediate')
              measured = await nodeWindow(immediateCall, concurrency, seconds * 1000);
            else if (arm === 'core_h2_before')
              measured = await nodeWindow(beforeCall, concurrency, seconds * 1000);
            else if (arm === 'floor') measured = await nodeWindow(floorCall, concurrency, seconds * 1000);
            else
              measured = python(arm === 'tc_aio' ? 'aio' : 'sync', url, size.elements, concurrency, seconds);
            if (serverPid !== undefined) {
              measured.serverCpuMsPerCall =
                (treeCpuMs(serverPid) - serverBefore) / Math.max(1, measured.calls);
            }
            const key = `${arm} ${size.label}c${concurrency}`;
            cells.set(key, [...(cells.get(key) ?? []), measured]);
          }
        }
        for (const arm of arms) {
          const runs = cells.get(`${arm} ${size.label}c${concurrency}`) ?? [];
          cases.push({
            name: `${arm} ${size.label || 'FP32[1,16]_'}c${concurrency}`,
            arm,
            load: `${size.label}c${concurrency}`,
            itemsPerSec: median(runs.map((entry) => entry.itemsPerSec)),
            p50Ms: median(runs.map((entry) => entry.p50Ms)),
            p99Ms: median(runs.map((entry) => entry.p99Ms)),
            extra: {
              cpuMsPerCall: median(runs.map((entry) => entry.cpuMsPerCall)),
              serverCpuMsPerCall: median(runs.map((entry) => entry.serverCpuMsPerCall ?? Number.NaN)),
              ...(arm.startsWith('tc_')
                ? {}
                : { gcMsPerCall: median(runs.map((entry) => entry.gcMsPerCall ?? Number.NaN)) }),
              rounds: runs,
            },
          });
        }
      }
    }
    const cell = (arm: Arm, load: string) => cases.find((entry) => entry.arm === arm && entry.load === load);
    const itemsRatio = (a: Arm, b: Arm, load: string) =>
      (cell(a, load)?.itemsPerSec ?? Number.NaN) / (cell(b, load)?.itemsPerSec ?? Number.NaN);
    for (const size of SIZES) {
      for (const concurrency of CONCURRENCIES) {
        const load = `${size.label}c${concurrency}`;
        ratios[`core_vs_floor_${load}`] = itemsRatio('core', 'floor', load);
        ratios[`core_h2_vs_floor_${load}`] = itemsRatio('core_h2', 'floor', load);
        ratios[`core_h2_vs_core_${load}`] = itemsRatio('core_h2', 'core', load);
        ratios[`core_h2_vs_before_${load}`] = itemsRatio('core_h2', 'core_h2_before', load);
        ratios[`core_h2_cpu_vs_before_${load}`] =
          ((cell('core_h2', load)?.extra?.cpuMsPerCall as number) ?? Number.NaN) /
          ((cell('core_h2_before', load)?.extra?.cpuMsPerCall as number) ?? Number.NaN);
        ratios[`core_h2_now_vs_core_h2_${load}`] = itemsRatio('core_h2_now', 'core_h2', load);
        ratios[`core_h2_immediate_vs_core_h2_${load}`] = itemsRatio('core_h2_immediate', 'core_h2', load);
        ratios[`core_tuned_vs_core_${load}`] = itemsRatio('core_tuned', 'core', load);
        if (withPython && concurrency > 1) {
          ratios[`core_vs_tritonclient_${load}`] = itemsRatio('core', 'tc_aio', load);
          ratios[`core_h2_vs_tritonclient_${load}`] = itemsRatio('core_h2', 'tc_aio', load);
          ratios[`core_h2_before_vs_tritonclient_${load}`] = itemsRatio('core_h2_before', 'tc_aio', load);
        }
      }
    }
    if (withPython) {
      const cpu = (arm: Arm) => cell(arm, 'c16')?.extra?.cpuMsPerCall as number;
      ratios.core_cpu_vs_tritonclient_c16 = cpu('core') / cpu('tc_aio');
      ratios.core_h2_cpu_vs_tritonclient_c16 = cpu('core_h2') / cpu('tc_aio');
    }
    // A narrowed run leaves some arms out: drop the figures it could not compute.
    for (const [key, value] of Object.entries(ratios)) if (!Number.isFinite(value)) delete ratios[key];
    const fixed = (value: unknown) => (typeof value === 'number' ? Number(value.toFixed(4)) : '');
    console.table(
      cases.map((entry) => ({
        case: entry.name,
        'items/s': Math.round(entry.itemsPerSec ?? 0),
        'client cpu ms/call': fixed(entry.extra?.cpuMsPerCall),
        'server cpu ms/call': fixed(entry.extra?.serverCpuMsPerCall),
        'gc ms/call': fixed(entry.extra?.gcMsPerCall),
      })),
    );
    writeFileSync(join(BENCH_DIR, 'results', 'unary.svg'), unaryChartSvg(cases));
    report({
      suite: 'unary',
      versions: { '@infergate/core': packageVersion('core'), server: serverName },
      cases,
      ratios,
      targets: {
        core_vs_floor_c1: '>= 0.9',
        core_vs_floor_c16: '>= 0.9',
        core_vs_floor_c64: '>= 0.9',
        core_vs_floor_1MiB_c1: '>= 0.9',
        core_vs_floor_1MiB_c16: '>= 0.9',
        core_vs_floor_1MiB_c64: '>= 0.9',
        core_vs_tritonclient_c16: '>= 1.0 (aim 1.5)',
        core_vs_tritonclient_c64: '>= 1.0 (aim 1.5)',
        core_vs_tritonclient_1MiB_c16: '>= 1.0 (aim 1.5)',
        core_vs_tritonclient_1MiB_c64: '>= 1.0 (aim 1.5)',
        core_cpu_vs_tritonclient_c16: '<= 1.0',
      },
      command: `pnpm bench unary --seconds ${seconds} --rounds ${rounds}${given ? ` --url ${given}` : ''}${engine === undefined ? '' : ` --engine ${engine}`}${compare ? ` --compare ${compare}` : ''}`,
    });
  } finally {
    bare.close();
    await core.close();
    await coreTuned.close();
    await coreH2.close();
    await coreNow.close();
    await coreImmediate.close();
    await before?.close();
    server?.child.kill('SIGTERM');
  }
}
