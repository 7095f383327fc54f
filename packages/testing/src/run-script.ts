import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ErrorCode, InfergateError } from '@infergate/core';

export interface RunScriptOptions {
  /** Repository root: where node_modules/.bin/tsx is. */
  cwd: string;
  /** Arguments after the script. */
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Text whose first appearance on stdout is timed (`markedAt`). */
  marker?: string;
  /** Kill the child after this long. @default 15000 */
  killAfterMs?: number;
}

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When `marker` first appeared on stdout (Date.now()), if it did. */
  markedAt: number | undefined;
  exitedAt: number;
}

/**
 * Runs a TypeScript script from source (tsx, workspace packages by their private
 * "@infergate/source" condition) in a child process and waits for it to exit: for tests of what
 * keeps a process alive. Needs `tsx` (an optional peer dependency) in `cwd`'s node_modules; when it
 * cannot be started the promise rejects (FAILED_PRECONDITION) instead of crashing the process.
 */
export function runScript(script: string, options: RunScriptOptions): Promise<ScriptRun> {
  const child = spawn(
    join(options.cwd, 'node_modules', '.bin', 'tsx'),
    ['--conditions=@infergate/source', script, ...(options.args ?? [])],
    {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  let markedAt: number | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (markedAt === undefined && options.marker !== undefined && stdout.includes(options.marker))
      markedAt = Date.now();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 15_000);
  return new Promise((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(killer);
      reject(
        new InfergateError(
          ErrorCode.FailedPrecondition,
          `runScript could not start tsx in ${options.cwd} (${error.code ?? error.message}); install tsx there`,
          { cause: error },
        ),
      );
    });
    child.once('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, markedAt, exitedAt: Date.now() });
    });
  });
}
