// The reference server in its own process, so a suite measures the client's cost alone.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ROOT } from './lib.js';

/**
 * CPU time (user + system) a child process and its descendants have used so far, ms (Linux /proc;
 * NaN elsewhere). Descendants count because tsx runs the source server in a grandchild.
 */
export function childCpuMs(child: ChildProcess): number {
  return processCpuMs(child.pid as number);
}

/**
 * The same for any process by its pid: PyTriton starts tritonserver and its Python-backend stubs
 * from any of its threads, so every thread's children count.
 */
export function processCpuMs(pid: number): number {
  try {
    return processTreeCpuMs(pid);
  } catch {
    return Number.NaN;
  }
}

function processTreeCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const id of children === '' ? [] : children.split(' ')) ms += processTreeCpuMs(Number(id));
  }
  return ms;
}
const CLOCK_TICKS = 100;

/**
 * How the server runs: the built CLI under plain node (as users install it) when this benchmark
 * itself runs against the built packages (`pnpm bench`, i.e. `bootstrap.mjs --dist`), else the CLI's
 * TypeScript source under tsx. The server's per-call work counts in every client-side figure (it
 * shares the machine's cores), and tsx wraps each function in its `__name` helper.
 */
export function serverCommand(built?: boolean): { command: string; args: string[]; built: boolean } {
  const bin = join(ROOT, 'packages/cli/dist/bin.js');
  const fromDist = !fileURLToPath(import.meta.resolve('@infergate/cli')).includes(
    join('packages', 'cli', 'src'),
  );
  if ((built ?? fromDist) && existsSync(bin)) {
    return { command: process.execPath, args: [bin], built: true };
  }
  return {
    command: join(ROOT, 'node_modules/.bin/tsx'),
    args: ['--conditions=@infergate/source', join(ROOT, 'packages/cli/src/bin.ts')],
    built: false,
  };
}

/**
 * Starts `infergate serve-test --port 0 --no-llm --json` (built or from source, see `serverCommand`;
 * `built` forces one or the other) and waits (60 s at most) for its address. `transport` picks what
 * serves its gRPC port (`--transport`); unset, `BENCH_SERVER_TRANSPORT` or the CLI's default.
 */
export async function startServerProcess(
  built?: boolean,
  transport: string | undefined = process.env.BENCH_SERVER_TRANSPORT,
): Promise<{ url: string; child: ChildProcess }> {
  const { command, args } = serverCommand(built);
  const chosen = transport === undefined || transport === '' ? [] : ['--transport', transport];
  const child = spawn(command, [...args, 'serve-test', '--port', '0', '--no-llm', '--json', ...chosen], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the reference server did not start within 60 s')),
      60_000,
    );
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { triton: string }).triton);
    });
    child.once('exit', (code) => reject(new Error(`the reference server exited (${code})`)));
  });
  return { url, child };
}
