import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');

export interface ServerProcess {
  /** `127.0.0.1:port`. */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** How many times each row id ran on this server (from its `ran …` lines). */
  readonly ran: Map<number, number>;
  /** Rows executed so far. */
  rows(): number;
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
  // Node itself with tsx as a loader, not the tsx CLI: the CLI runs the script in a grandchild that a
  // kill -9 of the child would leave running.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=@infergate/source',
      join(HERE, 'fixtures', 'chaos-server.ts'),
      '--port',
      String(options.port ?? 0),
      '--baseMs',
      String(options.baseMs ?? 40),
      '--perRowMs',
      String(options.perRowMs ?? 0.1),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  child.once('exit', () => process.off('exit', onExit));
  const ran = new Map<number, number>();
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
          for (const id of line.slice(4).split(' ')) {
            const key = Number(id);
            ran.set(key, (ran.get(key) ?? 0) + 1);
            rows += 1;
          }
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
