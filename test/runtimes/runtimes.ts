// Where the runtimes of the matrix live and how a program is run in each. Bun, Deno and workerd
// come from the lockfile (root devDependencies); their install scripts do not run under pnpm, so the
// binary is taken from the platform package each of them lists as an optional dependency.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RUNTIMES_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(RUNTIMES_DIR, '..', '..');
const requireFromRoot = createRequire(join(ROOT, 'package.json'));

const arch = process.arch === 'arm64' ? 'arm64' : 'x64';

/** `<optional platform package>/<path>`, resolved from the wrapper package (pnpm keeps it beside it). */
function platformBinary(wrapper: string, platformPackage: string, path: string): string {
  const wrapperDir = dirname(requireFromRoot.resolve(`${wrapper}/package.json`));
  const fromWrapper = createRequire(join(wrapperDir, 'package.json'));
  try {
    return join(dirname(fromWrapper.resolve(`${platformPackage}/package.json`)), path);
  } catch (error) {
    throw new Error(
      `${wrapper}: its binary package ${platformPackage} is not installed for ${process.platform}-${process.arch} (run pnpm install)`,
      { cause: error },
    );
  }
}

export function bunBinary(): string {
  const name =
    process.platform === 'darwin'
      ? `darwin-${arch === 'arm64' ? 'aarch64' : 'x64'}`
      : `linux-${arch === 'arm64' ? 'aarch64' : 'x64'}`;
  return platformBinary('bun', `@oven/bun-${name}`, 'bin/bun');
}

export function denoBinary(): string {
  const name = process.platform === 'darwin' ? `darwin-${arch}` : `linux-${arch}-glibc`;
  return platformBinary('deno', `@deno/${name}`, 'deno');
}

export function workerdBinary(): string {
  const name =
    process.platform === 'darwin'
      ? `darwin-${arch === 'arm64' ? 'arm64' : '64'}`
      : `linux-${arch === 'arm64' ? 'arm64' : '64'}`;
  return platformBinary('workerd', `@cloudflare/workerd-${name}`, 'bin/workerd');
}

export const TSX_CLI = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

export interface ProgramRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The program's `RESULT <json>` line, parsed; undefined if it printed none. */
  report: { ok: boolean; checks: { name: string; ok: boolean; detail?: string }[] } | undefined;
}

/** Runs a program to its end, killed after `killAfterMs`. */
export function runProgram(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; killAfterMs?: number } = {},
): Promise<ProgramRun> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 90_000);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(killer);
      const line = stdout.split('\n').find((text) => text.startsWith('RESULT '));
      resolve({ code, stdout, stderr, report: line === undefined ? undefined : JSON.parse(line.slice(7)) });
    });
  });
}
