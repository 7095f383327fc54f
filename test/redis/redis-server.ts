// Test harness: a real Debian `redis-server` on a free 127.0.0.1 port, for the Redis ledger tests.
// Never skips: a missing binary is a failure that says how to install it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;

export interface RedisServerOptions {
  /**
   * Keep data across `restart()`: append-only file (fsync always) in a temp dir. Otherwise no
   * persistence at all.
   */
  persistent?: boolean;
}

export interface RedisServerHandle {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Stops the server (SIGTERM: Redis flushes its append-only file) and starts it again on the same port and dir. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function requireBinary(): void {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    throw new Error(
      `redis-server is required for the Redis ledger tests but "${BINARY}" could not be run ` +
        `(${probe.error?.message ?? `exit ${probe.status}`}). Install it with \`sudo apt-get install redis-server\` ` +
        '(or set REDIS_SERVER_BIN to its path).',
    );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

async function waitReady(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}:\n${output()}`);
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} not ready within ${READY_TIMEOUT_MS} ms:\n${output()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts redis-server on a free port and waits (bounded) until it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  requireBinary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'infergate-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
  ];
  args.push(
    ...(options.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  );
  let child: ChildProcess;
  let log = '';
  const launch = async () => {
    log = '';
    child = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4_000);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4_000);
    });
    await waitReady(port, child, () => log);
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    async restart() {
      await stopChild(child);
      await launch();
    },
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
