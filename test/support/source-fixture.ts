// Runs a fixture in a fresh Node process, so that nothing the test runner loaded or registered
// first (zod, OpenTelemetry, an SDK) is there: the tests of what a package loads at import, at
// construction and on its first call use it.
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxLoader = pathToFileURL(`${root}node_modules/tsx/dist/loader.mjs`).href;

/** A bound for a failure only: tsx loading the sources in a fresh process on a busy 2-core machine. */
export const FIXTURE_EXIT_BOUND_MS = 90_000;

export interface FixtureRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the TypeScript file `fixture` through tsx in a fresh process, from the repository root, with
 * the workspace packages resolved to their sources as the tests see them (the `@infergate/source`
 * condition) unless `sourceCondition` is false. The process is killed after `FIXTURE_EXIT_BOUND_MS`.
 */
export function runSourceFixture(
  fixture: URL,
  options: { sourceCondition?: boolean } = {},
): Promise<FixtureRun> {
  const args = [
    ...(options.sourceCondition === false ? [] : ['--conditions=@infergate/source']),
    '--import',
    tsxLoader,
    fileURLToPath(fixture),
  ];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), FIXTURE_EXIT_BOUND_MS);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `fixture` as `runSourceFixture` does, expects it to exit 0 with nothing on stderr, and returns
 * the JSON it printed after `RESULT `.
 */
export async function fixtureResult(
  fixture: URL,
  options: { sourceCondition?: boolean } = {},
  // biome-ignore lint/suspicious/noExplicitAny: the fixture's JSON, typed as JSON.parse types it
): Promise<any> {
  const { code, stdout, stderr } = await runSourceFixture(fixture, options);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 'RESULT '.length));
}
