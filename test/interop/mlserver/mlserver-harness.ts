// Start/stop MLServer 1.7.1 (a second KServe v2 server) for interop tests. Node built-ins only.
// The venv (test/interop/mlserver/.venv) is created by setup-venv.sh when missing.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const VENV_DIR = join(HERE, '.venv');
const MLSERVER_BIN = join(VENV_DIR, 'bin', 'mlserver');
/** settings.json (127.0.0.1, no metrics server, in-process models) and the `doubler` model. */
export const MLSERVER_REPOSITORY = join(HERE, 'repo');

export interface MlserverHandle {
  grpcAddress: string;
  httpAddress: string;
  stop(): Promise<void>;
  logTail(lines?: number): string;
}

/** Creates the venv if it is missing (runs setup-venv.sh); throws with its output on failure. */
export function ensureMlserverVenv(): void {
  if (existsSync(MLSERVER_BIN) && existsSync(join(VENV_DIR, '.infergate-requirements'))) return;
  const r = spawnSync('bash', [join(HERE, 'setup-venv.sh')], { encoding: 'utf8', env: process.env });
  if (r.status !== 0) {
    throw new Error(
      `mlserver/setup-venv.sh failed (exit ${r.status ?? r.signal}):\n${r.stdout ?? ''}${r.stderr ?? ''}`,
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

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const timer = setTimeout(() => res(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      res(true);
    });
  });
}

/**
 * Starts MLServer on free 127.0.0.1 ports and resolves once the HTTP readiness endpoint answers
 * and the gRPC server is up. Rejects (never skips) with the log tail if it does not come up.
 */
export async function startMlserver(options: { timeoutMs?: number } = {}): Promise<MlserverHandle> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  ensureMlserverVenv();
  const httpPort = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === httpPort) grpcPort = await freePort();

  const lines: string[] = [];
  const logTail = (n = 60) => lines.slice(-n).join('\n');
  const child = spawn(MLSERVER_BIN, ['start', MLSERVER_REPOSITORY], {
    cwd: MLSERVER_REPOSITORY,
    env: {
      ...process.env,
      MLSERVER_HTTP_PORT: String(httpPort),
      MLSERVER_GRPC_PORT: String(grpcPort),
      PYTHONUNBUFFERED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const onData = (d: string) => {
    for (const line of d.split('\n')) if (line !== '') lines.push(line);
    if (lines.length > 3000) lines.splice(0, lines.length - 3000);
  };
  child.stdout?.setEncoding('utf8').on('data', onData);
  child.stderr?.setEncoding('utf8').on('data', onData);
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {
      /* gone */
    }
  };
  const onExit = () => killGroup('SIGKILL');
  process.once('exit', onExit);

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      process.off('exit', onExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup('SIGTERM');
      if (!(await waitForExit(child, 15_000))) {
        killGroup('SIGKILL');
        await waitForExit(child, 5_000);
      }
    })();
    return stopped;
  };

  const started = Date.now();
  try {
    while (true) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `mlserver exited before it was ready (code=${child.exitCode}, signal=${child.signalCode})`,
        );
      }
      if (Date.now() - started > timeoutMs) throw new Error(`mlserver was not ready within ${timeoutMs} ms`);
      const grpcUp = lines.some((l) => l.includes(`gRPC server running on http://127.0.0.1:${grpcPort}`));
      const httpReady = await fetch(`http://127.0.0.1:${httpPort}/v2/health/ready`)
        .then((r) => r.ok)
        .catch(() => false);
      if (grpcUp && httpReady) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (error) {
    await stop();
    throw new Error(
      `${(error as Error).message} after ${Date.now() - started} ms.\n--- mlserver log tail ---\n${logTail(80)}`,
    );
  }
  return { grpcAddress: `127.0.0.1:${grpcPort}`, httpAddress: `127.0.0.1:${httpPort}`, stop, logTail };
}
