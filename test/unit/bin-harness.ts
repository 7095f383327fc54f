// The CLI's tests run the real `infergate` bin against a reference server on 127.0.0.1 that the
// harness starts before the file's tests and stops after them, with a scratch directory removed at
// the end. The bin is bundled from source once per file (esbuild, the workspace packages by their
// "@infergate/source" condition, as the built bin bundles them) and each run is a plain
// `node bundle.mjs ...` in the Node running the tests: loading the CLI's sources through tsx cost
// 1.5-2 s of CPU per start, the bundle a fifth of that, and a file of bin tests starts it dozens of
// times.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer, type TestServerOptions } from '@infergate/testing';
import { build } from 'esbuild';
import { afterAll, beforeAll, vi } from 'vitest';

/** The repository root, where the bin runs. */
export const root = fileURLToPath(new URL('../../', import.meta.url));
/** The bin's source. */
export const bin = join(root, 'packages', 'cli', 'src', 'bin.ts');
/**
 * Where the bundles go: inside packages/core, because core loads grpc-js, zod and the OpenTelemetry
 * API lazily with `createRequire(import.meta.url)` (esbuild leaves those calls alone), so the
 * bundle's own URL must resolve them as core's sources do. One file per test process.
 */
const bundleDir = join(root, 'packages', 'core', 'node_modules', '.cache', 'infergate-bin-test');

/** Bundles the bin's source into one ES module; returns its path. */
export async function bundleBin(): Promise<string> {
  await mkdir(bundleDir, { recursive: true });
  const outfile = join(bundleDir, `bin-${process.pid}-${Date.now()}.mjs`);
  await build({
    entryPoints: [bin],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@infergate/source'],
    // CommonJS dependencies bundled into an ES module call require(): give them Node's.
    banner: {
      js: "import { createRequire as __infergateRequire } from 'node:module'; const require = __infergateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  return outfile;
}

export interface BinRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface BinHarness {
  /** The reference server (set once the file's `beforeAll` ran). */
  readonly server: TestServer;
  /** A directory of the file's own, removed after its tests. */
  readonly scratch: string;
  /** The command line that starts the bin (this Node and the bundle), for a test that spawns it itself. */
  readonly command: readonly [string, string];
  /** Runs `infergate ...args` to its end (killed after `killAfterMs`, default 60 s). */
  run(args: readonly string[], options?: { env?: NodeJS.ProcessEnv; killAfterMs?: number }): Promise<BinRun>;
}

/**
 * A test of the bin spawns it several times, each start a second or more on a busy 2-core machine.
 * The file's tests get a timeout sized for that, not the unit project's 20 s.
 */
const BIN_TEST_TIMEOUT_MS = 120_000;

export function binHarness(serverOptions: TestServerOptions = {}): BinHarness {
  vi.setConfig({ testTimeout: BIN_TEST_TIMEOUT_MS });
  let server: TestServer | undefined;
  let scratch: string | undefined;
  let bundle: string | undefined;
  beforeAll(async () => {
    server = await startTestServer(serverOptions);
    scratch = await mkdtemp(join(tmpdir(), 'infergate-cli-'));
    bundle = await bundleBin();
  });
  afterAll(async () => {
    await server?.stop();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    if (bundle !== undefined) await rm(bundle, { force: true });
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the bin harness is used before its beforeAll ran');
    return value;
  };
  return {
    get server() {
      return ready(server);
    },
    get scratch() {
      return ready(scratch);
    },
    get command() {
      return [process.execPath, ready(bundle)] as const;
    },
    run(args, options = {}) {
      return runNode(ready(bundle), args, options.env ?? process.env, options.killAfterMs ?? 60_000);
    },
  };
}

/** Runs `node script ...args` in the repository root to its end; SIGKILL after `killAfterMs`. */
function runNode(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  killAfterMs: number,
): Promise<BinRun> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    // 'close' comes after the output streams ended: everything the bin printed is in.
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}
