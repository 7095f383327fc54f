import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// As batcher-without-otel.test.ts: a fresh process, so that nothing else loaded or registered
// OpenTelemetry first (decision 0025, third addendum).
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const fixture = fileURLToPath(new URL('./chat-without-otel-fixture.ts', import.meta.url));
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

describe('chat models', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('import, make a model and send a call and a stream in a fresh process without loading @opentelemetry/api, and use an SDK registered afterwards', async () => {
    const { code, stdout, stderr } = await runFixture();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout.slice(stdout.indexOf('RESULT ') + 7));
    expect(result).toEqual({
      afterImport: false,
      afterConstruct: false,
      afterCall: false,
      afterRegister: true,
      traceparentBefore: [null, null],
      spans: ['chat gpt-4o-mini'],
      propagated: true,
      tokens: [
        { type: 'input', sum: 1 },
        { type: 'output', sum: 2 },
      ],
    });
  });
});
