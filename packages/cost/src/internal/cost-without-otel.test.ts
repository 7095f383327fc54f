import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// As batcher-without-otel.test.ts: a fresh process, so that nothing else loaded or registered
// OpenTelemetry first (decision 0025, fourth addendum).
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const fixture = fileURLToPath(new URL('./cost-without-otel-fixture.ts', import.meta.url));
const tsxLoader = pathToFileURL(`${root}node_modules/tsx/dist/loader.mjs`).href;
/** A bound for the failure only: tsx loading the sources on a busy 2-core machine. */
const EXIT_BOUND_MS = 90_000;

function runFixture(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // The workspace packages from their sources, as the tests see them (not a built dist).
  const child = spawn(process.execPath, ['--conditions=@infergate/source', '--import', tsxLoader, fixture], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_BOUND_MS);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('createCostTracker', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('imports, makes a tracker, reserves and settles, and charges a Triton call in a fresh process without loading @opentelemetry/api, and uses an SDK registered afterwards', async () => {
    const { code, stdout, stderr } = await runFixture();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
    expect(result).toEqual({
      afterImport: false,
      afterConstruct: false,
      afterCall: false,
      chargedBefore: true,
      afterRegister: true,
      // Each settle put its cost and tenant on the span active where it ran.
      costAttributes: {
        'reserve and settle': { usd: 'number', tenant: 'acme' },
        'triton call': { usd: 'number', tenant: 'globex' },
      },
      rpcSpan: true,
      spent: [
        { model: 'm', positive: true },
        { model: 'identity', provider: 'triton', positive: true },
      ],
      // Only the reservation made after the registration counted up (the one held from before is
      // not counted down on this provider either: it reads 0, not −1, once both are finished).
      reservationsHeld: 1,
      reservationsAfter: [0],
      remaining: [{ 'infergate.budget': 'hourly' }],
    });
  });
});
