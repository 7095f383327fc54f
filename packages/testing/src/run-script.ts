import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCode, InfergateError } from '@infergate/core';
import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';

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
  /** True when the script did not exit by itself and was killed after `killAfterMs`. */
  killed: boolean;
}

/**
 * Runs a TypeScript script from source (tsx, workspace packages by their private
 * "@infergate/source" condition) in a child process and waits for it to exit: for tests of what
 * keeps a process alive. Needs `tsx` (an optional peer dependency) in `cwd`'s node_modules; when it
 * cannot be started the promise rejects (FAILED_PRECONDITION) instead of crashing the process.
 */
export function runScript(script: string, options: RunScriptOptions): Promise<ScriptRun> {
  // tsx's loader in this very Node (a test on Node 24 runs its script on Node 24 too), in one
  // process: the tsx CLI would start the script in a second one, which a kill of the first leaves
  // running with the output pipes open.
  const loader = join(options.cwd, 'node_modules', 'tsx', 'dist', 'loader.mjs');
  if (!existsSync(loader)) {
    return Promise.reject(
      new InfergateError(
        ErrorCode.FailedPrecondition,
        `runScript could not start tsx in ${options.cwd} (${loader} is missing); install tsx there`,
      ),
    );
  }
  const child = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(loader).href,
      '--conditions=@infergate/source',
      script,
      ...(options.args ?? []),
    ],
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
  let killed = false;
  const killer = setLongTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, options.killAfterMs ?? 15_000);
  return new Promise((resolve, reject) => {
    let exitedAt = 0;
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearLongTimer(killer);
      reject(
        new InfergateError(
          ErrorCode.FailedPrecondition,
          `runScript could not start ${process.execPath} (${error.code ?? error.message})`,
          { cause: error },
        ),
      );
    });
    child.once('exit', () => {
      exitedAt = Date.now();
    });
    // 'close' comes after the output streams ended: everything the script printed is in.
    child.once('close', (code) => {
      clearLongTimer(killer);
      resolve({ code, stdout, stderr, markedAt, exitedAt: exitedAt || Date.now(), killed });
    });
  });
}
