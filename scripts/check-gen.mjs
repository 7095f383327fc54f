#!/usr/bin/env node
// Verifies that packages/core/src/gen/ matches what `pnpm gen` produces from
// packages/core/proto/*.proto. It reruns the package's own `gen` script (buf
// with packages/core/buf.gen.yaml, which writes to src/gen) with `--output`
// pointing at a temporary directory and compares the trees byte for byte.
// Exits 1, naming the files, if anything differs.
//
// Usage: node scripts/check-gen.mjs   (from anywhere, after `pnpm install`:
// buf comes from the @bufbuild/buf devDependency, so no system protoc is
// needed). Node built-ins only.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = join(root, 'packages', 'core');
const genDir = join(pkgDir, 'src', 'gen');
const OUT_DIR = join('src', 'gen'); // the template's `out`, relative to --output

function fail(msg) {
  console.error(`check-gen: ${msg}`);
  process.exit(1);
}

/** All files below `dir`, as sorted paths relative to it ("/"-separated). */
function listFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const genScript = pkg.scripts?.gen;
if (typeof genScript !== 'string') fail('packages/core/package.json has no "gen" script');
if (!/\bbuf generate\b/.test(genScript) || /(^|\s)(-o|--output)\b/.test(genScript)) {
  fail(
    `the "gen" script must run \`buf generate\` without --output so it can be redirected:\n  ${genScript}`,
  );
}

/**
 * Runs the gen script into `outDir` and compares the result with src/gen.
 * Returns the process exit code.
 */
function check(outDir) {
  // Same command as `pnpm gen`, run by a shell in packages/core (so the
  // template and the relative plugin path behave exactly as there), with
  // the base output directory moved to outDir.
  const cmd = `${genScript} --output '${outDir.replaceAll("'", "'\\''")}'`;
  try {
    execFileSync('sh', ['-c', cmd], { cwd: pkgDir, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    console.error(`check-gen: code generation failed (${err.status ?? err.message}); command was:\n  ${cmd}`);
    return 1;
  }

  const want = listFiles(join(outDir, OUT_DIR));
  const have = listFiles(genDir);
  if (want.length === 0) {
    console.error('check-gen: the gen script produced no files');
    return 1;
  }

  const haveSet = new Set(have);
  const wantSet = new Set(want);
  const missing = want.filter((f) => !haveSet.has(f));
  const extra = have.filter((f) => !wantSet.has(f));
  const stale = want.filter(
    (f) => haveSet.has(f) && !readFileSync(join(outDir, OUT_DIR, f)).equals(readFileSync(join(genDir, f))),
  );

  const rel = (f) => relative(root, join(genDir, f)).split('\\').join('/');
  if (missing.length + extra.length + stale.length === 0) {
    console.log(`check-gen: ${want.length} generated file(s) up to date (${want.map(rel).join(', ')})`);
    return 0;
  }
  const lines = ['generated code in packages/core/src/gen is out of date:'];
  for (const f of stale) lines.push(`  differs:  ${rel(f)}`);
  for (const f of missing) lines.push(`  missing:  ${rel(f)}`);
  for (const f of extra) lines.push(`  extra:    ${rel(f)} (not produced by the protos)`);
  lines.push('run `pnpm gen` in packages/core and commit the result.');
  console.error(`check-gen: ${lines.join('\n')}`);
  return 1;
}

const tmp = mkdtempSync(join(tmpdir(), 'infergate-gen-'));
let code = 1;
try {
  code = check(tmp);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(code);
