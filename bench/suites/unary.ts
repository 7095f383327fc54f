// Suite `unary`: one inference on an FP32 identity ([1,16] and [1,262144] = 1 MiB), closed loop at
// c1/c16/c64, in two halves, each with its arms interleaved and their order rotated each round, after
// a warm-up:
//   1. the reference server's `identity` in its OWN process (so the client's cost is not hidden by a
//      shared event loop): the named figures core_vs_floor_*, core_vs_tritonclient_*;
//   2. real Triton (the interop venv's tritonserver) on `identity_fp32_py`, a plain Python-backend
//      model (test/interop/models; no PyTriton proxy, so the server is as cheap as Triton gets):
//      the same figures prefixed `triton_`, reported without targets. Skipped, and said so, when the
//      interop venv is missing or with --no-triton; --triton-url HOST:PORT uses a running Triton
//      that serves identity_fp32_py.
// Arms:
//   core         @infergate/core (enableGpuIpc: false), the default engine (http2 since decision 0017)
//   core_into    core with `outputs: [{ name, into }]`: each caller's answer decoded into a Float32Array
//                of its own, reused call after call (decision 0026); 1 MiB cells only (armsForSize)
//   core_tuned   the same with grpc-js channel options tuned (channelz and retries off)
//   core_h2      the same with engine: 'http2' named: since it became the default, the same code as
//                core (the spread between the two is the run's noise); only when named in --arms
//   core_h2_now, core_h2_immediate
//                the http2 engine writing each request at once, or holding writes to the next
//                setImmediate (as node:http2 does), where the engine holds them until the microtask
//                queue drains; only when named in --arms, to compare write policies
//   floor        bare @grpc/grpc-js sending the same pre-encoded request bytes, no decoding
//   tc_aio       NVIDIA's tritonclient.grpc.aio (interop venv), one process per window
//   tc_sync      tritonclient.grpc with one thread and client per caller (for information)
// Defaults: core, core_into, core_tuned, floor, tc_aio, tc_sync against the reference server; core,
// floor, tc_aio against Triton (bench/unary-figures.ts).
// Per cell: medians over rounds of items/s, p50, p99 and client CPU per call, and the server's CPU
// per call (its process tree): what a client's way of sending costs the process that shares the
// machine with it.
//   pnpm bench unary [--seconds 2] [--rounds 3] [--url HOST:PORT] [--no-python] [--engine grpc-js|http2]
//                    [--arms core_h2,floor,tc_aio] [--sizes 16,1MiB] [--concurrency 16,64]
//                    [--compare packages/core/.tmp/index-before.js]
//                    [--no-triton | --triton-url HOST:PORT | --triton-only] [--triton-arms core,tc_aio]
// (--compare adds the arm core_h2_before: the http2 engine from another ESM build of core, e.g. a
// copy of packages/core/dist/index.js saved before a change, measured side by side with this one;
// keep the copy inside packages/core, so its imports resolve, and out of dist/, which builds clean.)
// (--engine sets what the `core` arm, and so the named core_* figures, use; --arms/--sizes/
// --concurrency narrow the run for profiling work, and the figures they leave out are not written;
// --triton-only skips the reference-server half.)
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { buildInferRequest, createTritonClient, type InferOptions, type InputTensor } from '@infergate/core';
import { summarizeLatencies } from '../../packages/cli/src/perf/latency-summary.js';
import { closedLoopWindow, type WindowSample } from '../../packages/cli/src/perf/load-window.js';
import { serializeInferRequest, toModelInferRequest } from '../../packages/core/src/internal/infer-wire.js';
import { startTriton, type TritonHandle, VENV_PYTHON } from '../../test/interop/triton-harness.js';
import { BENCH_DIR, type BenchCase, flag, median, packageVersion, ROOT, report } from '../lib.js';
import { processCpuMs, startServerProcess } from '../server-process.js';
import {
  armsForSize,
  chooseArms,
  REFERENCE_DEFAULT_ARMS,
  TRITON_DEFAULT_ARMS,
  TRITON_PREFIX,
  UNARY_ARMS,
  UNARY_CONCURRENCIES,
  UNARY_SIZES,
  type UnaryArm,
  unaryRatios,
  unknownArms,
} from '../unary-figures.js';

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
  /** The kernel's part of cpuMsPerCall (socket writes and reads, page faults). */
  systemMsPerCall?: number;
  /** Node arms: garbage-collection pause time per call (PerformanceObserver 'gc' entries). */
  gcMsPerCall?: number;
  /** Node arms: calls that failed in the window (not in items/s or the latencies). */
  errors?: number;
  /** The server's CPU per call in the window (a server this suite started only). */
  serverCpuMsPerCall?: number;
}

/** Total GC pause time seen so far in this process, ms. */
let gcTotalMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcTotalMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** A Node arm's window, with its GC time per call. */
async function nodeWindow(call: () => Promise<unknown>, concurrency: number, ms: number): Promise<Measured> {
  const gcBefore = gcTotalMs;
  const cpuBefore = process.cpuUsage();
  const sample = await closedLoopWindow(call, concurrency, ms);
  const systemMs = process.cpuUsage(cpuBefore).system / 1000;
  // Entries arrive asynchronously: let the observer catch up before reading the total.
  await new Promise((resolve) => setImmediate(resolve));
  if (sample.errors > 0) console.warn(`  ${sample.errors} calls failed: ${sample.firstError}`);
  return {
    ...fromSample(sample),
    gcMsPerCall: (gcTotalMs - gcBefore) / Math.max(1, sample.completed),
    systemMsPerCall: systemMs / Math.max(1, sample.completed),
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
  model: string,
  elements: number,
  concurrency: number,
  seconds: number,
): Measured {
  const run = spawnSync(
    PYTHON,
    [SCRIPT, mode, url, model, String(elements), String(concurrency), String(seconds)],
    { encoding: 'utf8', timeout: (seconds + 60) * 1000 },
  );
  if (run.status !== 0) throw new Error(`tritonclient ${mode} failed: ${run.stderr || run.error?.message}`);
  const out = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as {
    completed: number;
    elapsedMs: number;
    cpuMs: number;
    systemMs: number;
    p50Ms: number;
    p99Ms: number;
  };
  return {
    calls: out.completed,
    itemsPerSec: (out.completed * 1000) / out.elapsedMs,
    p50Ms: out.p50Ms,
    p99Ms: out.p99Ms,
    cpuMsPerCall: out.cpuMs / out.completed,
    systemMsPerCall: out.systemMs / out.completed,
  };
}

const ARM_COLORS: Record<UnaryArm, string> = {
  core: '#1f77b4',
  core_into: '#17becf',
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
  UNARY_SIZES.forEach((size, panel) => {
    const top = 30 + panel * (panelH + 10);
    const cells = UNARY_CONCURRENCIES.map((c) => `${size.label}c${c}`);
    const rows = cases.filter((entry) => cells.includes(entry.load));
    const max = Math.max(1, ...rows.map((entry) => entry.itemsPerSec ?? 0));
    const plotH = panelH - 40;
    const groupW = (width - 160) / cells.length;
    const barW = (groupW - 20) / UNARY_ARMS.length;
    parts.push(
      `<text x="60" y="${top}" font-size="13">identity ${size.label ? 'FP32 [1,262144] (1 MiB)' : 'FP32 [1,16]'}: items/s (max ${Math.round(max)})</text>`,
      `<line x1="60" y1="${top + 10 + plotH}" x2="${width - 100}" y2="${top + 10 + plotH}" stroke="#000"/>`,
    );
    cells.forEach((cell, group) => {
      const x0 = 70 + group * groupW;
      UNARY_ARMS.forEach((arm, index) => {
        const value = rows.find((entry) => entry.load === cell && entry.arm === arm)?.itemsPerSec ?? 0;
        const h = (value / max) * plotH;
        const x = x0 + index * barW;
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${(top + 10 + plotH - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${ARM_COLORS[arm]}"/>`,
          `<text x="${(x + barW / 2).toFixed(1)}" y="${(top + 6 + plotH - h).toFixed(1)}" text-anchor="middle" font-size="9">${Math.round(value)}</text>`,
        );
      });
      parts.push(
        `<text x="${(x0 + (groupW - 20) / 2).toFixed(1)}" y="${top + plotH + 24}" text-anchor="middle">c${UNARY_CONCURRENCIES[group]}</text>`,
      );
    });
  });
  UNARY_ARMS.forEach((arm, index) => {
    const y = 50 + index * 18;
    parts.push(
      `<rect x="${width - 90}" y="${y - 9}" width="12" height="12" fill="${ARM_COLORS[arm]}"/>`,
      `<text x="${width - 72}" y="${y + 1}">${arm}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** The plain Python-backend FP32 identity the real-Triton half calls (test/interop/models). */
const TRITON_MODEL = 'identity_fp32_py';

/** One server to measure: the reference server or real Triton. */
interface Target {
  /** '' or TRITON_PREFIX: prefixes every case's load and every figure of this half. */
  prefix: string;
  url: string;
  model: string;
  /** The server's process, when this suite started it: its CPU per call is recorded. */
  serverPid: number | undefined;
}

interface RunOptions {
  seconds: number;
  rounds: number;
  sizes: readonly (typeof UNARY_SIZES)[number][];
  concurrencies: readonly number[];
  engine: 'grpc-js' | 'http2' | undefined;
  compare: string | undefined;
}

type Call = () => Promise<unknown>;
interface Closable {
  infer(model: string, inputs: InputTensor[], options?: InferOptions): Promise<unknown>;
  close(): Promise<void>;
}

/** The Node arms' clients for one server: only those of the arms measured. */
async function openClients(
  url: string,
  arms: readonly UnaryArm[],
  options: RunOptions,
): Promise<{ clients: Map<UnaryArm, Closable>; bare: BareClient | undefined }> {
  const base = { url, enableGpuIpc: false, timeoutMs: 60_000 } as const;
  const clients = new Map<UnaryArm, Closable>();
  const want = (arm: UnaryArm) => arms.includes(arm);
  if (want('core'))
    clients.set(
      'core',
      createTritonClient({ ...base, ...(options.engine ? { engine: options.engine } : {}) }),
    );
  if (want('core_into')) clients.set('core_into', createTritonClient(base));
  if (want('core_tuned')) {
    clients.set(
      'core_tuned',
      createTritonClient({
        ...base,
        engine: 'grpc-js',
        channelOptions: {
          'grpc.enable_channelz': 0,
          'grpc.enable_retries': 0,
          'grpc.per_rpc_retry_buffer_size': 0,
        },
      }),
    );
  }
  if (want('core_h2')) clients.set('core_h2', createTritonClient({ ...base, engine: 'http2' }));
  /** The http2 engine with another write policy (an internal switch read when a client is made). */
  const withPolicy = (policy: 'now' | 'immediate') => {
    process.env.INFERGATE_H2_WRITE_POLICY = policy;
    try {
      return createTritonClient({ ...base, engine: 'http2' });
    } finally {
      delete process.env.INFERGATE_H2_WRITE_POLICY;
    }
  };
  if (want('core_h2_now')) clients.set('core_h2_now', withPolicy('now'));
  if (want('core_h2_immediate')) clients.set('core_h2_immediate', withPolicy('immediate'));
  if (want('core_h2_before') && options.compare !== undefined) {
    const before = (await import(pathToFileURL(join(ROOT, options.compare)).href)) as {
      createTritonClient: typeof createTritonClient;
    };
    clients.set('core_h2_before', before.createTritonClient({ ...base, engine: 'http2' }));
  }
  let bare: BareClient | undefined;
  if (want('floor')) {
    const grpc = createRequire(join(ROOT, 'packages/core/package.json'))('@grpc/grpc-js') as GrpcModule;
    bare = new grpc.Client(url, grpc.credentials.createInsecure());
  }
  return { clients, bare };
}

/**
 * The `core_into` arm's call: the answer decoded into a Float32Array of the caller's. Each of the
 * window's callers takes an array from the free list and gives it back after its call, so a closed
 * loop at cN allocates N arrays once and reuses them.
 */
function intoCall(client: Closable, model: string, inputs: InputTensor[], elements: number): Call {
  const free: Float32Array[] = [];
  return async () => {
    const into = free.pop() ?? new Float32Array(elements);
    try {
      await client.infer(model, inputs, { outputs: [{ name: 'OUTPUT0', into }] });
    } finally {
      free.push(into);
    }
  };
}

/** One half of the suite: every size × concurrency cell of `arms` against `target`. */
async function measure(target: Target, arms: readonly UnaryArm[], options: RunOptions): Promise<BenchCase[]> {
  const { seconds, rounds } = options;
  const { clients, bare } = await openClients(target.url, arms, options);
  const cells = new Map<string, Measured[]>();
  const cases: BenchCase[] = [];
  try {
    for (const size of options.sizes) {
      const data = Float32Array.from({ length: size.elements }, () => Math.random());
      const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, size.elements], data }];
      const request = buildInferRequest(target.model, inputs);
      const bytes = serializeInferRequest(
        toModelInferRequest(request),
        request.inputs.map((input) => ('raw' in input ? (input.raw as Uint8Array) : new Uint8Array())),
      );
      const calls = new Map<UnaryArm, Call>();
      for (const [arm, client] of clients) {
        if (arm !== 'core_into') calls.set(arm, () => client.infer(target.model, inputs));
        else calls.set(arm, intoCall(client, target.model, inputs, size.elements));
      }
      const sizeArms = armsForSize(arms, size.label);
      if (bare !== undefined) {
        calls.set(
          'floor',
          () =>
            new Promise<Buffer>((resolve, reject) => {
              bare.makeUnaryRequest(
                INFER_PATH,
                (value) => value,
                (value) => value,
                bytes,
                (error, value) => (error ? reject(error) : resolve(value as Buffer)),
              );
            }),
        );
      }
      // Warm-up: connections, JIT, the server's first calls (tritonclient warms up in its process).
      for (const [arm, call] of calls) if (sizeArms.includes(arm)) await closedLoopWindow(call, 16, 500);
      for (const concurrency of options.concurrencies) {
        for (let round = 0; round < rounds; round++) {
          const order = sizeArms.map((_, index) => sizeArms[(index + round) % sizeArms.length] as UnaryArm);
          for (const arm of order) {
            const serverBefore = target.serverPid === undefined ? 0 : processCpuMs(target.serverPid);
            const call = calls.get(arm);
            const measured =
              call !== undefined
                ? await nodeWindow(call, concurrency, seconds * 1000)
                : python(
                    arm === 'tc_aio' ? 'aio' : 'sync',
                    target.url,
                    target.model,
                    size.elements,
                    concurrency,
                    seconds,
                  );
            if (target.serverPid !== undefined) {
              measured.serverCpuMsPerCall =
                (processCpuMs(target.serverPid) - serverBefore) / Math.max(1, measured.calls);
            }
            const key = `${arm} ${size.label}c${concurrency}`;
            cells.set(key, [...(cells.get(key) ?? []), measured]);
          }
        }
        for (const arm of sizeArms) {
          const runs = cells.get(`${arm} ${size.label}c${concurrency}`) ?? [];
          cases.push({
            name: `${target.prefix ? 'triton ' : ''}${arm} ${size.label || 'FP32[1,16]_'}c${concurrency}`,
            arm,
            load: `${target.prefix}${size.label}c${concurrency}`,
            itemsPerSec: median(runs.map((entry) => entry.itemsPerSec)),
            p50Ms: median(runs.map((entry) => entry.p50Ms)),
            p99Ms: median(runs.map((entry) => entry.p99Ms)),
            extra: {
              cpuMsPerCall: median(runs.map((entry) => entry.cpuMsPerCall)),
              systemMsPerCall: median(runs.map((entry) => entry.systemMsPerCall ?? Number.NaN)),
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
  } finally {
    bare?.close();
    for (const client of clients.values()) await client.close();
  }
  return cases;
}

/** Real Triton for the second half: the given URL, else one started from the interop venv, else why not. */
async function tritonFor(): Promise<{ url: string; handle?: TritonHandle } | { skipped: string }> {
  const given = flag('triton-url');
  if (given !== undefined) return { url: given };
  if (process.argv.includes('--no-triton')) return { skipped: '--no-triton' };
  if (!existsSync(VENV_PYTHON)) {
    return {
      skipped: `no interop venv at ${VENV_PYTHON} (bash test/interop/setup-venv.sh creates it, with tritonserver and tritonclient)`,
    };
  }
  try {
    const handle = await startTriton({ models: [TRITON_MODEL], restrictedEndpoints: [] });
    return { url: handle.grpcAddress, handle };
  } catch (error) {
    return { skipped: `Triton did not start: ${(error as Error).message}` };
  }
}

export async function run(): Promise<void> {
  const named = flag('arms')?.split(',');
  const tritonNamed = flag('triton-arms')?.split(',') ?? named;
  const typos = [...unknownArms(named), ...unknownArms(tritonNamed)];
  if (typos.length > 0) throw new Error(`unknown arm(s) ${typos.join(', ')}; arms: ${UNARY_ARMS.join(', ')}`);
  const onlySizes = flag('sizes')?.split(',');
  const engineFlag = flag('engine');
  const options: RunOptions = {
    seconds: Number(flag('seconds') ?? 2),
    rounds: Number(flag('rounds') ?? 3),
    sizes: UNARY_SIZES.filter(
      (size) => onlySizes === undefined || onlySizes.includes(size.label ? '1MiB' : String(size.elements)),
    ),
    concurrencies: flag('concurrency')?.split(',').map(Number) ?? UNARY_CONCURRENCIES,
    engine: engineFlag === 'grpc-js' || engineFlag === 'http2' ? engineFlag : undefined,
    compare: flag('compare'),
  };
  const withPython = !process.argv.includes('--no-python') && existsSync(PYTHON);
  const compare = options.compare !== undefined;
  const referenceArms = chooseArms({ named, defaults: REFERENCE_DEFAULT_ARMS, withPython, compare });
  const tritonArms = chooseArms({ named: tritonNamed, defaults: TRITON_DEFAULT_ARMS, withPython, compare });
  if (!withPython) console.warn(`unary: no tritonclient arms (${PYTHON} missing or --no-python)`);
  const cases: BenchCase[] = [];
  const versions: Record<string, string> = { '@infergate/core': packageVersion('core') };

  const given = flag('url');
  if (!process.argv.includes('--triton-only')) {
    const server = given === undefined ? await startServerProcess() : undefined;
    const url = given ?? (server?.url as string);
    try {
      const probe = createTritonClient({ url, enableGpuIpc: false });
      versions.server = (await probe.serverMetadata()).name;
      await probe.close();
      console.log(`unary: the reference server (${url}), arms ${referenceArms.join(', ')}`);
      const started = performance.now();
      cases.push(
        ...(await measure(
          { prefix: '', url, model: 'identity', serverPid: server?.child.pid },
          referenceArms,
          options,
        )),
      );
      console.log(
        `unary: the reference-server half took ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
    } finally {
      server?.child.kill('SIGTERM');
    }
  }

  const tritonStarted = performance.now();
  const triton = await tritonFor();
  if ('skipped' in triton) {
    console.warn(`unary: the real-Triton half is SKIPPED (no triton_* figures): ${triton.skipped}`);
  } else {
    try {
      const probe = createTritonClient({ url: triton.url, enableGpuIpc: false });
      versions.triton = (await probe.serverMetadata()).version;
      await probe.close();
      console.log(
        `unary: real Triton ${versions.triton} (${triton.url}, ${TRITON_MODEL}), arms ${tritonArms.join(', ')}`,
      );
      cases.push(
        ...(await measure(
          { prefix: TRITON_PREFIX, url: triton.url, model: TRITON_MODEL, serverPid: triton.handle?.pid },
          tritonArms,
          options,
        )),
      );
    } finally {
      await triton.handle?.stop();
    }
    const took = ((performance.now() - tritonStarted) / 1000).toFixed(0);
    console.log(`unary: the real-Triton half took ${took} s (Triton's start and stop included)`);
  }

  const ratios = { ...unaryRatios(cases), ...unaryRatios(cases, TRITON_PREFIX) };
  const fixed = (value: unknown) => (typeof value === 'number' ? Number(value.toFixed(4)) : '');
  console.table(
    cases.map((entry) => ({
      case: entry.name,
      'items/s': Math.round(entry.itemsPerSec ?? 0),
      'client cpu ms/call': fixed(entry.extra?.cpuMsPerCall),
      'of it system': fixed(entry.extra?.systemMsPerCall),
      'server cpu ms/call': fixed(entry.extra?.serverCpuMsPerCall),
      'gc ms/call': fixed(entry.extra?.gcMsPerCall),
    })),
  );
  writeFileSync(
    join(BENCH_DIR, 'results', 'unary.svg'),
    unaryChartSvg(cases.filter((entry) => !entry.load.startsWith(TRITON_PREFIX))),
  );
  const passed = (name: string) => {
    const value = flag(name);
    return value === undefined ? '' : ` --${name} ${value}`;
  };
  report({
    suite: 'unary',
    versions,
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
    command: `pnpm bench unary --seconds ${options.seconds} --rounds ${options.rounds}${[
      'url',
      'engine',
      'compare',
      'arms',
      'sizes',
      'concurrency',
      'triton-url',
      'triton-arms',
    ]
      .map(passed)
      .join('')}${['--no-python', '--no-triton', '--triton-only']
      .filter((name) => process.argv.includes(name))
      .map((name) => ` ${name}`)
      .join('')}`,
  });
}
