// Runs a bundled Worker in workerd on a free 127.0.0.1 port, with outbound fetch allowed to local
// addresses (where the reference server listens). `stop()` ends the process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workerdBinary } from './runtimes.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

export interface WorkerdServer {
  url: string;
  log(): string;
  stop(): Promise<void>;
}

export async function startWorkerd(
  code: string,
  options: { readyWithinMs?: number } = {},
): Promise<WorkerdServer> {
  const dir = mkdtempSync(join(tmpdir(), 'infergate-workerd-'));
  writeFileSync(join(dir, 'worker.js'), code);
  const port = await freePort();
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2025-01-01",
  globalOutbound = "internet",
);
`,
  );
  const child = spawn(workerdBinary(), ['serve', join(dir, 'config.capnp')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  // Ready when the socket answers (a request without ?target= gets 400), bounded.
  const until = Date.now() + (options.readyWithinMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`workerd exited with ${child.exitCode}:\n${log}`);
    }
    const answered = await fetch(url).then(
      (response) => response.status === 400,
      () => false,
    );
    if (answered) return { url, log: () => log, stop };
    if (Date.now() > until) {
      await stop();
      throw new Error(`workerd did not answer on ${url} within the bound:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
