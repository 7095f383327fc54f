import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

// The published bundle is built by tsup (esbuild), which renames a class that refers to itself
// (`class _InfergateError`). Bundle errors.ts the same way and look at what a log would print.
const directory = mkdtempSync(join(tmpdir(), 'infergate-error-name-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function bundled(format: 'esm' | 'cjs'): Promise<typeof import('./errors.js')> {
  const result = await build({
    entryPoints: [join(import.meta.dirname, 'errors.ts')],
    bundle: true,
    write: false,
    format,
    platform: 'node',
    target: 'node20',
    treeShaking: true,
  });
  const file = join(directory, `errors.${format === 'esm' ? 'mjs' : 'cjs'}`);
  writeFileSync(file, result.outputFiles[0]?.text ?? '');
  return import(pathToFileURL(file).href);
}

describe('InfergateError in the built bundle', () => {
  for (const format of ['esm', 'cjs'] as const) {
    it(`prints as InfergateError, not the bundler's renamed class (${format})`, async () => {
      const { InfergateError } = await bundled(format);
      const error = new InfergateError('UNAVAILABLE', 'down');
      expect(InfergateError.name).toBe('InfergateError');
      expect(error.name).toBe('InfergateError');
      expect(error.constructor.name).toBe('InfergateError');
      expect(inspect(error).split('\n')[0]).toBe('InfergateError: [UNAVAILABLE] down');
      expect(error.stack?.split('\n')[0]).toBe('InfergateError: [UNAVAILABLE] down');
      expect(String(error)).toBe('InfergateError: [UNAVAILABLE] down');
    });
  }
});
