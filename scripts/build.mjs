#!/usr/bin/env node
// Builds every publishable package (tsup: ESM + CJS + .d.ts) in dependency order.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');
const packages = readdirSync(packagesDir).map((name) => {
  const manifest = JSON.parse(readFileSync(join(packagesDir, name, 'package.json'), 'utf8'));
  const deps = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies };
  return { dir: join(packagesDir, name), name: manifest.name, deps: Object.keys(deps) };
});

const done = new Set();
const order = [];
function visit(pkg, stack = new Set()) {
  if (done.has(pkg.name)) return;
  if (stack.has(pkg.name)) throw new Error(`dependency cycle through ${pkg.name}`);
  stack.add(pkg.name);
  for (const dep of pkg.deps) {
    const internal = packages.find((candidate) => candidate.name === dep);
    if (internal) visit(internal, stack);
  }
  done.add(pkg.name);
  order.push(pkg);
}
for (const pkg of packages) visit(pkg);

// Every tarball ships the licence: a package without the root LICENSE (a new one) gets a copy.
const license = readFileSync(join(root, 'LICENSE'), 'utf8');
const tsup = join(root, 'node_modules', '.bin', 'tsup');
for (const pkg of order) {
  const packageLicense = join(pkg.dir, 'LICENSE');
  if (!existsSync(packageLicense) || readFileSync(packageLicense, 'utf8') !== license) {
    console.log(`copying LICENSE into ${pkg.name} (commit it)`);
    writeFileSync(packageLicense, license);
  }
  console.log(`building ${pkg.name}`);
  const result = spawnSync(tsup, ['--silent'], { cwd: pkg.dir, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`build of ${pkg.name} failed`);
    process.exit(1);
  }
}
