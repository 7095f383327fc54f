// Start/stop a real Triton Inference Server (CPU, via PyTriton) for interop tests.
// Node built-ins only; no project imports. See README.md in this folder.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const INTEROP_DIR = HERE;
export const VENV_DIR = join(HERE, '.venv');
export const VENV_PYTHON = join(VENV_DIR, 'bin', 'python');
const PYTHON_LIB_DIR = '/root/.pyenv/versions/3.11.7/lib';

/** Token guarding the restricted endpoint groups by default. */
export const DEFAULT_ACCESS_TOKEN = 'infergate-test-token';
/** Endpoint groups restricted by default (Triton `--grpc-restricted-protocol`). */
export const DEFAULT_RESTRICTED_ENDPOINTS = ['trace', 'logging'];
/** gRPC metadata key Triton checks for restricted groups (Triton prefixes the configured key). */
export const GRPC_ACCESS_TOKEN_HEADER = 'triton-grpc-protocol-triton-access-token';
/** HTTP header Triton checks for restricted groups. */
export const HTTP_ACCESS_TOKEN_HEADER = 'triton-access-token';

export interface StartTritonOptions {
  /** Bound on the wait for the READY line (default 120 s; measured ~10 s on 2 cores). */
  timeoutMs?: number;
  /** Token for restricted endpoint groups (default DEFAULT_ACCESS_TOKEN). */
  accessToken?: string;
  /** Restricted endpoint groups; [] = nothing restricted (default DEFAULT_RESTRICTED_ENDPOINTS). */
  restrictedEndpoints?: string[];
  /**
   * Also append every server log line (stderr as is, stdout prefixed `[stdout] `) to this file,
   * truncated at start. Lets other processes (test workers) read the log of a shared server.
   */
  logFile?: string;
  /**
   * OTLP/HTTP endpoint (`http://127.0.0.1:<port>/v1/traces`): start Triton in OpenTelemetry trace
   * mode (level TIMESTAMPS, rate 1) exporting every request's spans there as JSON. Default: Triton's
   * own trace mode, tracing off (what the shared server and triton-access.test.ts expect).
   */
  otelTraceUrl?: string;
  /** Serve only these models (default: every model of triton_server.py). */
  models?: string[];
}

export interface TritonHandle {
  grpcAddress: string;
  httpAddress: string;
  metricsAddress: string;
  accessToken: string;
  restrictedEndpoints: string[];
  stop(): Promise<void>;
  /** kill -9 of the whole process group (python, tritonserver, stubs), as a crash: chaos tests. */
  kill(): Promise<void>;
  /** The process group id (the python process's pid), for a kill -9 from another process. */
  pid: number | undefined;
  logTail(lines?: number): string;
}

function pythonEnv(): NodeJS.ProcessEnv {
  const ld = process.env.LD_LIBRARY_PATH;
  return {
    ...process.env,
    LD_LIBRARY_PATH: ld ? `${PYTHON_LIB_DIR}:${ld}` : PYTHON_LIB_DIR,
    PYTHONUNBUFFERED: '1',
  };
}

/** Create test/interop/.venv if it is missing (runs setup-venv.sh); throws with its output on failure. */
export function ensureVenv(): void {
  if (existsSync(VENV_PYTHON) && existsSync(join(VENV_DIR, '.infergate-requirements'))) return;
  const r = spawnSync('bash', [join(HERE, 'setup-venv.sh')], { encoding: 'utf8', env: process.env });
  if (r.status !== 0) {
    throw new Error(
      `setup-venv.sh failed (exit ${r.status ?? r.signal}):\n${(r.stdout ?? '') + (r.stderr ?? '')}`.trimEnd(),
    );
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const child of liveChildren) {
      try {
        // Negative pid: the whole process group (python + tritonserver + stubs).
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        try {
          child.kill('SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAll();
      process.kill(process.pid, sig);
    });
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      res(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      res(true);
    };
    child.once('exit', onExit);
  });
}

function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      /* gone */
    }
  }
}

/**
 * Start Triton on free 127.0.0.1 ports and resolve once every model is loaded.
 * Rejects (never skips) with the tail of the server log if it does not come up.
 */
export async function startTriton(options: StartTritonOptions = {}): Promise<TritonHandle> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const accessToken = options.accessToken ?? DEFAULT_ACCESS_TOKEN;
  const restrictedEndpoints = options.restrictedEndpoints ?? DEFAULT_RESTRICTED_ENDPOINTS;
  ensureVenv();
  const [grpcPort, httpPort, metricsPort] = await distinctFreePorts(3);

  const { logFile } = options;
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    writeFileSync(logFile, '');
  }
  const logLines: string[] = [];
  const MAX_LOG_LINES = 5000;
  const pushLog = (prefix: string, chunk: string, carry: { rest: string }) => {
    const parts = (carry.rest + chunk).split('\n');
    carry.rest = parts.pop() ?? '';
    for (const line of parts) {
      logLines.push(prefix + line);
      if (logLines.length > MAX_LOG_LINES) logLines.shift();
    }
    if (logFile && parts.length > 0) {
      try {
        appendFileSync(logFile, parts.map((line) => `${prefix}${line}\n`).join(''));
      } catch {
        /* the in-memory tail still has it */
      }
    }
  };
  const logTail = (lines = 60) => logLines.slice(-lines).join('\n');

  installExitHook();
  const child = spawn(
    VENV_PYTHON,
    [
      join(HERE, 'triton_server.py'),
      `--grpc-port=${grpcPort}`,
      `--http-port=${httpPort}`,
      `--metrics-port=${metricsPort}`,
      `--access-token=${accessToken}`,
      `--restricted-endpoints=${restrictedEndpoints.join(',')}`,
      ...(options.otelTraceUrl ? [`--otel-trace-url=${options.otelTraceUrl}`] : []),
      ...(options.models ? [`--models=${options.models.join(',')}`] : []),
    ],
    { cwd: HERE, env: pythonEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup(child, 'SIGTERM');
      if (!(await waitForExit(child, 30_000))) {
        signalGroup(child, 'SIGKILL');
        await waitForExit(child, 5_000);
      }
      liveChildren.delete(child);
    })();
    return stopped;
  };

  const outCarry = { rest: '' };
  const errCarry = { rest: '' };
  child.stderr?.setEncoding('utf8').on('data', (d: string) => pushLog('', d, errCarry));
  const started = Date.now();
  try {
    await new Promise<void>((resolveReady, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Triton did not print READY within ${timeoutMs} ms`)),
        timeoutMs,
      );
      let seen = '';
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        pushLog('[stdout] ', d, outCarry);
        seen = (seen + d).slice(-4096);
        if (/^READY grpc=\d+ http=\d+/m.test(seen)) {
          clearTimeout(timer);
          resolveReady();
        }
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.once('exit', (code, sig) => {
        clearTimeout(timer);
        reject(new Error(`triton_server.py exited before READY (code=${code}, signal=${sig})`));
      });
    });
  } catch (e) {
    await stop();
    const err = new Error(
      `${(e as Error).message} after ${Date.now() - started} ms.\n--- server log tail ---\n${logTail(80)}`,
    );
    throw err;
  }

  return {
    grpcAddress: `127.0.0.1:${grpcPort}`,
    httpAddress: `127.0.0.1:${httpPort}`,
    metricsAddress: `127.0.0.1:${metricsPort}`,
    accessToken,
    restrictedEndpoints,
    stop,
    kill: async () => {
      signalGroup(child, 'SIGKILL');
      await waitForExit(child, 10_000);
      liveChildren.delete(child);
    },
    pid: child.pid,
    logTail,
  };
}

/**
 * Run a Python script with the interop venv. `script` is a path (relative paths resolve
 * against test/interop/). Resolves with stdout; rejects with stderr on a non-zero exit.
 */
export function runPython(script: string, args: string[] = [], input?: string): Promise<string> {
  ensureVenv();
  return new Promise((resolveOut, reject) => {
    const child = spawn(VENV_PYTHON, [resolve(HERE, script), ...args], {
      cwd: HERE,
      env: pythonEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('error', reject);
    child.once('close', (code, sig) => {
      if (code === 0) resolveOut(out);
      else reject(new Error(`${script} exited with ${code ?? sig}\n${err}${out}`.trimEnd()));
    });
    child.stdin.end(input ?? '');
  });
}
