import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const FIXTURE = join(HERE, 'fixtures', 'chaos-server.ts');

/**
 * One execution on the server (its `ran` line): rows and four instants on the machine's monotonic
 * clock (`process.hrtime`, in ms; `toPerformanceNow` turns one into this process's
 * `performance.now()`).
 */
export interface Execution {
  rows: number;
  /** The request's HTTP/2 headers reached the server's JavaScript. */
  arrived: number;
  /** The model's execute called: the request decoded and validated. */
  entered: number;
  /** The slot taken. */
  slot: number;
  /** The slot's time over (the answer is built and sent right after). */
  done: number;
  /** The first read of the socket data burst that brought the request (NaN when none was seen). */
  read: number;
  /** How far past its cost the simulated GPU ended this execution, in ms. */
  overrunMs: number;
}

export interface ServerProcess {
  /** `127.0.0.1:port`. */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** How many times each row id ran on this server (from its `ran …` lines). */
  readonly ran: Map<number, number>;
  /** Rows executed so far. */
  rows(): number;
  /** The last 1,000 executions, oldest first. */
  readonly executions: readonly Execution[];
  /** How the child runs: see `ServerProcessOptions.runtime`. */
  readonly runtime: 'source' | 'built';
  /** kill -9: the process dies at once, its sockets with it. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL if it does not exit. Idempotent. */
  stop(): Promise<void>;
}

export interface ServerProcessOptions {
  /** @default 0 (free port) */
  port?: number;
  baseMs?: number;
  perRowMs?: number;
  /** @default 30000 */
  readyTimeoutMs?: number;
  /**
   * `source`: Node with the tsx loader, workspace packages from their TypeScript sources (what the
   * tests run). `built`: the fixture transpiled once to JavaScript (`.tmp/`) and run by plain Node,
   * `@infergate/testing` from its built `dist/` — what a user's server process is. @default `built`
   * when this process itself resolves `@infergate/testing` to its build (a benchmark run with
   * `--dist`), else `source`.
   */
  runtime?: 'source' | 'built';
  /** Runs of chaos_gpu's `model_warmup` sample before the server listens (0: none). @default 0 */
  warmup?: number;
}

/** Whether this process runs against the built packages (resolves `@infergate/testing` to dist/). */
function runsBuilt(): boolean {
  try {
    return import.meta.resolve('@infergate/testing').includes('/dist/');
  } catch {
    return false;
  }
}

/** An instant of `Execution` (monotonic clock, ms) as this process's `performance.now()`. */
export function toPerformanceNow(monotonicMs: number): number {
  return monotonicMs - (Number(process.hrtime.bigint()) / 1e6 - performance.now());
}

let transpiled: string | undefined;

/**
 * The fixture as JavaScript, next to the repository's node_modules (so its bare imports resolve to
 * the built packages), written once per process. Transpiled only: imports stay imports.
 */
async function builtFixture(): Promise<string> {
  if (transpiled !== undefined) return transpiled;
  const { transform } = await import('esbuild');
  const { code } = await transform(readFileSync(FIXTURE, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: FIXTURE,
  });
  const dir = join(ROOT, '.tmp', 'chaos-server');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'chaos-server.mjs');
  // Another process may be writing the same file: write aside, then rename (atomic).
  const aside = `${file}.${process.pid}`;
  writeFileSync(aside, code);
  renameSync(aside, file);
  transpiled = file;
  return file;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `fixtures/chaos-server.ts` in a child process (a real kill -9 target) and resolves once it
 * listens. Every child is killed when this process exits, whatever happened.
 */
export async function startServerProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const runtime = options.runtime ?? (runsBuilt() ? 'built' : 'source');
  // Node itself (with tsx as a loader for the sources), not the tsx CLI: the CLI runs the script in
  // a grandchild that a kill -9 of the child would leave running.
  const entry =
    runtime === 'built'
      ? [await builtFixture()]
      : ['--import', 'tsx', '--conditions=@infergate/source', FIXTURE];
  const child = spawn(
    process.execPath,
    [
      ...entry,
      '--port',
      String(options.port ?? 0),
      '--baseMs',
      String(options.baseMs ?? 40),
      '--perRowMs',
      String(options.perRowMs ?? 0.1),
      '--warmup',
      String(options.warmup ?? 0),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  child.once('exit', () => process.off('exit', onExit));
  const ran = new Map<number, number>();
  const executions: Execution[] = [];
  let rows = 0;
  let rest = '';
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`chaos server did not start: ${stderr}`));
    }, options.readyTimeoutMs ?? 30_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('ran ')) {
          const [list = '', times = ''] = line.slice(4).split(' @ ');
          const ids = list.split(' ');
          for (const id of ids) {
            const key = Number(id);
            ran.set(key, (ran.get(key) ?? 0) + 1);
            rows += 1;
          }
          const [
            arrived = Number.NaN,
            entered = Number.NaN,
            slot = Number.NaN,
            done = Number.NaN,
            read = Number.NaN,
            overrunMs = Number.NaN,
          ] = times.split(' ').map(Number);
          executions.push({ rows: ids.length, arrived, entered, slot, done, read, overrunMs });
          if (executions.length > 1_000) executions.shift();
        } else if (line.startsWith('READY ')) {
          clearTimeout(timer);
          resolve(line.slice(6).trim());
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`chaos server exited before READY (${code ?? signal}): ${stderr}`));
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    url,
    port: Number(url.split(':').pop()),
    child,
    ran,
    rows: () => rows,
    executions,
    runtime,
    kill: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
    stop: () => {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited(child);
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
