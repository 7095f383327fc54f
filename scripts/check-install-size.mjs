#!/usr/bin/env node
// Install sizes as npm users get them: packs every package (pnpm pack, so workspace: ranges become
// versions), installs the tarballs into temporary projects with npm, and checks
//   - no package's own unpacked tarball is over 1.5 MB (OWN_LIMITS would name an exception);
//   - @infergate/cost adds at most 3 MB to an install that already has @infergate/core
//     (gpt-tokenizer is an optional peer, so cost is light by default);
// and that the installed packages work: ESM and CJS entries, @infergate/core/proto, token
// estimates without the tokenizer. Needs built packages (scripts/build.mjs) and the npm registry.
//   node scripts/check-install-size.mjs [--keep] [--tarballs DIR]
// --tarballs DIR: the tarballs scripts/check-packages.mjs --pack-dir DIR packed (npm test's packages
// step), when it packed them all; otherwise this script packs them itself.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packedBefore, packPackages } from './pack-packages.mjs';

const MB = 1_000_000;
const MAX_OWN_BYTES = 1.5 * MB;
/**
 * Packages allowed more than the default: none. core, with two gRPC engines, the HTTP client and
 * the generated protocol code, needed 1.85 MB while its tarball shipped src/ for the workspace's
 * `@infergate/source` condition; since its published exports leave that condition out
 * (`publishConfig.exports`) and its tarball leaves src/ out, it unpacks to about 1.26 MB
 * (decision 0010).
 */
const OWN_LIMITS = {};
const MAX_COST_OVER_CORE_BYTES = 3 * MB;

const work = mkdtempSync(join(tmpdir(), 'infergate-install-size-'));
const keep = process.argv.includes('--keep');
const tarballsIndex = process.argv.indexOf('--tarballs');
const packedDir =
  tarballsIndex === -1 ? undefined : resolve(process.argv[tarballsIndex + 1] ?? '.tmp/packed');
const failures = [];

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

/** Bytes of every file under `dir` (links not followed). */
function sizeOf(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += sizeOf(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

const mb = (bytes) => `${(bytes / MB).toFixed(2)} MB`;

function install(name, tarballs) {
  const dir = join(work, name);
  mkdirSync(dir);
  const dependencies = Object.fromEntries(tarballs.map(([pkg, file]) => [pkg, `file:${file}`]));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module', dependencies }),
  );
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], dir);
  return dir;
}

try {
  const reused = packedDir === undefined ? undefined : packedBefore(packedDir);
  if (packedDir !== undefined && reused === undefined)
    console.log(`no complete set of tarballs in ${packedDir}: packing them`);
  const packed = reused ?? packPackages(join(work, 'tarballs'));
  const tarballs = new Map();
  for (const { folder, dir, name, private: isPrivate, tarball } of packed) {
    if (isPrivate) continue;
    try {
      statSync(join(dir, 'dist'));
    } catch {
      throw new Error(`${name} is not built: run node scripts/build.mjs first`);
    }
    const unpacked = join(work, 'unpacked', folder);
    mkdirSync(unpacked, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', unpacked], work);
    const own = sizeOf(unpacked);
    tarballs.set(name, tarball);
    const limit = OWN_LIMITS[name] ?? MAX_OWN_BYTES;
    const verdict = own <= limit ? '✓' : '✗';
    console.log(`${verdict} ${name}: ${mb(own)} unpacked (limit ${mb(limit)})`);
    if (own > limit) failures.push(`${name} unpacks to ${mb(own)} (limit ${mb(limit)})`);
  }

  const core = ['@infergate/core', tarballs.get('@infergate/core')];
  const cost = ['@infergate/cost', tarballs.get('@infergate/cost')];
  const coreOnly = install('core-only', [core]);
  const withCost = install('core-and-cost', [core, cost]);
  const coreBytes = sizeOf(join(coreOnly, 'node_modules'));
  const bothBytes = sizeOf(join(withCost, 'node_modules'));
  const added = bothBytes - coreBytes;
  const verdict = added <= MAX_COST_OVER_CORE_BYTES ? '✓' : '✗';
  console.log(`  install of core: ${mb(coreBytes)}; core + cost: ${mb(bothBytes)}`);
  console.log(
    `${verdict} @infergate/cost adds ${mb(added)} over core (limit ${mb(MAX_COST_OVER_CORE_BYTES)})`,
  );
  if (added > MAX_COST_OVER_CORE_BYTES) failures.push(`@infergate/cost adds ${mb(added)} over core`);

  // The installed packages work from both module systems, and cost works without the tokenizer.
  writeFileSync(
    join(withCost, 'smoke.mjs'),
    `import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { InfergateError } from '@infergate/core';
import { GRPCInferenceService } from '@infergate/core/proto';
import { estimateTokens, createCostTracker } from '@infergate/cost';
const require = createRequire(import.meta.url);
const cjsCore = require('@infergate/core');
const cjsCost = require('@infergate/cost');
assert.equal(typeof GRPCInferenceService, 'object');
assert.ok(new cjsCore.InfergateError('UNAVAILABLE', 'x') instanceof InfergateError);
assert.equal(typeof cjsCost.createCostTracker, 'function');
const estimate = await estimateTokens({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
assert.equal(estimate.estimated, true, 'without gpt-tokenizer installed, estimates use the heuristic');
assert.ok(createCostTracker());
console.log('✓ installed core and cost load through import and require, proto subpath included; estimates fall back to the heuristic');
`,
  );
  console.log(run(process.execPath, ['smoke.mjs'], withCost).trim());
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

if (failures.length > 0) {
  console.error(`\ninstall size check failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
