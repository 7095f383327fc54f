#!/usr/bin/env node
// publint and @arethetypeswrong/cli on every built package: what npm users would install must
// resolve for ESM and CJS importers, with types, in Node 16+ resolution modes. Also: every tarball
// ships the root LICENSE, every manifest says where the code, the docs and the issues live, and no
// package declares a lower Node than a runtime dependency of it needs.
// Each package is packed once (scripts/pack-packages.mjs) and every check reads that tarball.
//   node scripts/check-packages.mjs [--pack-dir DIR]
// --pack-dir keeps the tarballs in DIR for scripts/check-install-size.mjs (npm test passes it);
// without it they go to a temporary folder, removed at the end.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packPackages } from './pack-packages.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const license = readFileSync(join(root, 'LICENSE'), 'utf8');
const packDirIndex = process.argv.indexOf('--pack-dir');
const packDir = packDirIndex === -1 ? undefined : resolve(process.argv[packDirIndex + 1] ?? '.tmp/packed');

/** The Node floor we test on (the unit suite's first run): every package declares it. */
const NODE_FLOOR = '>=20';

/** The major version an `engines.node` range starts at (`>=22`, `>= 18.0.0`, `^20 || >=22`), if any. */
function floorMajor(range) {
  const majors = [...String(range ?? '').matchAll(/(?<![.\d])(\d+)/g)].map((match) => Number(match[1]));
  return majors.length > 0 ? Math.min(...majors) : undefined;
}

/**
 * Runtime dependencies (installed with the package, loaded when it runs) whose own engines need a
 * newer Node than the package declares. Peers and devDependencies are the user's or ours to pick.
 */
function engineProblems(manifest, dir) {
  const own = floorMajor(manifest.engines?.node);
  const problems = manifest.engines?.node === NODE_FLOOR ? [] : [`engines.node must be "${NODE_FLOOR}"`];
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    const path = join(dir, 'node_modules', dependency, 'package.json');
    if (!existsSync(path)) continue;
    const needs = JSON.parse(readFileSync(path, 'utf8')).engines?.node;
    const major = floorMajor(needs);
    if (own !== undefined && major !== undefined && major > own)
      problems.push(
        `dependency ${dependency} needs Node ${needs}, the package declares ${manifest.engines.node}`,
      );
  }
  return problems;
}

/** `exports` with every `@infergate/source` condition taken out. */
function withoutSourceCondition(value) {
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== '@infergate/source')
      .map(([key, inner]) => [key, withoutSourceCondition(inner)]),
  );
}

/** What is wrong with the package's metadata and tarball (empty when nothing is). */
function metadataProblems(name, dir, files) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const problems = [];
  if (manifest.license !== 'Apache-2.0') problems.push('license is not "Apache-2.0"');
  if (manifest.repository?.directory !== `packages/${name}` || typeof manifest.repository?.url !== 'string')
    problems.push(`repository needs url and directory "packages/${name}"`);
  if (typeof manifest.homepage !== 'string') problems.push('homepage is missing');
  if (typeof manifest.bugs?.url !== 'string') problems.push('bugs.url is missing');
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0)
    problems.push('keywords are missing');
  problems.push(...engineProblems(manifest, dir));
  // The tarball's exports (pnpm takes publishConfig's) must be the workspace's without the
  // private `@infergate/source` condition, whose `src/` the tarball leaves out.
  const expected = JSON.stringify(withoutSourceCondition(manifest.exports));
  if (JSON.stringify(manifest.publishConfig?.exports) !== expected)
    problems.push('publishConfig.exports is not exports without "@infergate/source"');
  if (files.some((file) => file.startsWith('src/')))
    problems.push('the tarball ships src/, which no published export points at');
  if (!files.includes('LICENSE'))
    problems.push('the tarball has no LICENSE (scripts/build.mjs copies the root one)');
  else if (readFileSync(join(dir, 'LICENSE'), 'utf8') !== license)
    problems.push('LICENSE differs from the root one');
  return problems;
}

const destination = packDir ?? mkdtempSync(join(tmpdir(), 'infergate-packages-'));
let failures = 0;
let packed = [];
try {
  packed = packPackages(destination);
} catch (error) {
  failures++;
  console.error(`✗ ${error instanceof Error ? error.message : String(error)}`);
}
for (const { folder: name, dir, tarball, files } of packed) {
  const problems = metadataProblems(name, dir, files);
  if (problems.length > 0) {
    failures++;
    console.error(`✗ metadata @infergate/${name}: ${problems.join('; ')}`);
  } else {
    console.log(`✓ metadata and LICENSE @infergate/${name}`);
  }
  for (const [tool, args] of [
    ['publint', ['--strict', tarball]],
    ['attw', [tarball, '--format', 'ascii']],
  ]) {
    const result = spawnSync(join(root, 'node_modules', '.bin', tool), args, { cwd: dir, encoding: 'utf8' });
    const output = `${result.stdout}${result.stderr}`.trim();
    if (result.status !== 0) {
      failures++;
      console.error(`✗ ${tool} @infergate/${name}\n${output}`);
    } else {
      console.log(`✓ ${tool} @infergate/${name}`);
    }
  }
}
if (packDir === undefined) rmSync(destination, { recursive: true, force: true });
process.exit(failures === 0 ? 0 : 1);
