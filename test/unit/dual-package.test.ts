import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageConfig } from '../../tsup.config.js';

// An app that both `require`s and `import`s @infergate/core loads two copies of it: the CJS build
// and the ESM build. Errors must still be recognised across them (the brand, not the class).
const coreDir = join(import.meta.dirname, '..', '..', 'packages', 'core');
// Inside core's node_modules, so the builds resolve core's own dependencies; never committed.
const outDir = join(coreDir, 'node_modules', '.dual-package-test');

type CoreModule = typeof import('@infergate/core');
let esm: CoreModule;
let cjs: CoreModule;

beforeAll(async () => {
  await build({
    ...packageConfig({ index: join(coreDir, 'src', 'index.ts') }),
    dts: false,
    outDir,
    silent: true,
    config: false,
  });
  cjs = createRequire(import.meta.url)(join(outDir, 'index.cjs')) as CoreModule;
  esm = (await import(pathToFileURL(join(outDir, 'index.js')).href)) as CoreModule;
}, 120_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('a mixed require/import app', () => {
  it('loads two distinct copies of core', () => {
    expect(cjs.InfergateError).not.toBe(esm.InfergateError);
  });

  it('keeps instanceof InfergateError across the copies, both ways', () => {
    const fromCjs = new cjs.InfergateError('UNAVAILABLE', 'down');
    const fromEsm = new esm.InfergateError('QUEUE_FULL', 'busy');
    expect(fromCjs instanceof esm.InfergateError).toBe(true);
    expect(fromEsm instanceof cjs.InfergateError).toBe(true);
    expect(esm.InfergateError.from(fromCjs)).toBe(fromCjs);
    expect(cjs.InfergateError.wrap(fromEsm, { model: 'm' }).code).toBe('QUEUE_FULL');
    expect(new Error('plain') instanceof cjs.InfergateError).toBe(false);
  });

  it('agrees on context keys across the copies', () => {
    expect(cjs.BATCH_SHARE_CONTEXT).toBe(esm.BATCH_SHARE_CONTEXT);
    expect(cjs.createContextKey('@acme/x')).toBe(esm.createContextKey('@acme/x'));
  });
});
