// The CLI's tests run the real `infergate` bin (tsx from source, as a user's shell would run the
// built one) against a reference server on 127.0.0.1 that the harness starts before the file's
// tests and stops after them, with a scratch directory removed at the end.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript, startTestServer, type TestServer, type TestServerOptions } from '@infergate/testing';
import { afterAll, beforeAll, vi } from 'vitest';

/** The repository root, where the bin runs. */
export const root = fileURLToPath(new URL('../../', import.meta.url));
/** The bin's source. */
export const bin = join(root, 'packages', 'cli', 'src', 'bin.ts');

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
  /** Runs `infergate ...args` to its end (killed after `killAfterMs`, default 60 s). */
  run(args: readonly string[], options?: { env?: NodeJS.ProcessEnv; killAfterMs?: number }): Promise<BinRun>;
}

/**
 * A test of the bin spawns it several times, and each start loads the CLI's source through tsx: a
 * few seconds each on a busy 2-core machine. The file's tests get a timeout sized for that, not the
 * unit project's 20 s.
 */
const BIN_TEST_TIMEOUT_MS = 120_000;

export function binHarness(serverOptions: TestServerOptions = {}): BinHarness {
  vi.setConfig({ testTimeout: BIN_TEST_TIMEOUT_MS });
  let server: TestServer | undefined;
  let scratch: string | undefined;
  beforeAll(async () => {
    server = await startTestServer(serverOptions);
    scratch = await mkdtemp(join(tmpdir(), 'infergate-cli-'));
  });
  afterAll(async () => {
    await server?.stop();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
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
    async run(args, options = {}) {
      const run = await runScript(bin, {
        cwd: root,
        args: [...args],
        killAfterMs: options.killAfterMs ?? 60_000,
        ...(options.env !== undefined ? { env: options.env } : {}),
      });
      return { code: run.code, stdout: run.stdout, stderr: run.stderr };
    },
  };
}
