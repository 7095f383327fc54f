// The reference server in its own process, so a suite measures the client's cost alone.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './lib.js';

/** Starts `infergate serve-test --port 0 --no-llm --json` from source and waits (60 s at most) for its address. */
export async function startServerProcess(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    join(ROOT, 'node_modules/.bin/tsx'),
    [
      '--conditions=@infergate/source',
      join(ROOT, 'packages/cli/src/bin.ts'),
      'serve-test',
      '--port',
      '0',
      '--no-llm',
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
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
