import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { runScript } from './run-script.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('runScript', () => {
  it('rejects with FAILED_PRECONDITION, not a crash, when tsx is not installed in cwd', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'infergate-run-script-'));
    try {
      const error = await runScript(join(empty, 'script.ts'), { cwd: empty }).catch(
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(InfergateError);
      expect((error as InfergateError).code).toBe('FAILED_PRECONDITION');
      expect((error as InfergateError).rawMessage).toMatch(/tsx/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('runs a TypeScript script and reports its output and exit code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'infergate-run-script-'));
    try {
      const script = join(dir, 'hello.ts');
      await writeFile(script, "const word: string = 'ready';\nconsole.log(word);\nprocess.exitCode = 3;\n");
      const run = await runScript(script, { cwd: ROOT, marker: 'ready' });
      expect(run.code).toBe(3);
      expect(run.stdout).toContain('ready');
      expect(run.markedAt).toBeDefined();
      expect(run.killed).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('kills a script that does not exit by itself after killAfterMs, and says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'infergate-run-script-'));
    try {
      const script = join(dir, 'forever.ts');
      await writeFile(script, "setInterval(() => {}, 1_000);\nconsole.log('started');\n");
      const run = await runScript(script, { cwd: ROOT, killAfterMs: 3_000 });
      expect(run).toMatchObject({ killed: true, code: null });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
