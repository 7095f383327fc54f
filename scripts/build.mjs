#!/usr/bin/env node
// Builds every publishable package (tsup: ESM + CJS + .d.ts), in dependency order: a package starts
// once the packages it depends on are built, up to two at a time (a build is one process for the
// JavaScript and a worker thread for the declarations; a 2-core machine runs two). Each build's
// output is printed whole when it ends.
//   node scripts/build.mjs [--jobs N]
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');
const argv = process.argv.slice(2);
const jobsIndex = argv.indexOf('--jobs');
const jobs = jobsIndex === -1 ? 2 : Math.max(1, Number.parseInt(argv[jobsIndex + 1] ?? '', 10) || 1);

const packages = readdirSync(packagesDir)
  .sort()
  .map((name) => {
    const manifest = JSON.parse(readFileSync(join(packagesDir, name, 'package.json'), 'utf8'));
    const deps = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies };
    return { dir: join(packagesDir, name), name: manifest.name, deps: Object.keys(deps) };
  });
const names = new Set(packages.map((pkg) => pkg.name));
for (const pkg of packages) pkg.internal = pkg.deps.filter((dep) => names.has(dep) && dep !== pkg.name);

// A cycle would leave packages that never become ready: refuse it before building anything.
{
  const placed = new Set();
  let progress = true;
  while (progress) {
    progress = false;
    for (const pkg of packages) {
      if (!placed.has(pkg.name) && pkg.internal.every((dep) => placed.has(dep))) {
        placed.add(pkg.name);
        progress = true;
      }
    }
  }
  const stuck = packages.filter((pkg) => !placed.has(pkg.name)).map((pkg) => pkg.name);
  if (stuck.length > 0) {
    console.error(`dependency cycle among ${stuck.join(', ')}`);
    process.exit(1);
  }
}

// Every tarball ships the licence: a package without the root LICENSE (a new one) gets a copy.
const license = readFileSync(join(root, 'LICENSE'), 'utf8');
for (const pkg of packages) {
  const packageLicense = join(pkg.dir, 'LICENSE');
  if (!existsSync(packageLicense) || readFileSync(packageLicense, 'utf8') !== license) {
    console.log(`copying LICENSE into ${pkg.name} (commit it)`);
    writeFileSync(packageLicense, license);
  }
}

const tsup = join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js');

/** Runs tsup in the package's folder; resolves with its exit status, its output printed whole. */
function build(pkg) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [tsup, '--silent'], {
      cwd: pkg.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text) => {
      output += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text) => {
      output += text;
    });
    child.once('error', (error) => {
      output += `${error.message}\n`;
    });
    child.once('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`built ${pkg.name} (${seconds}s)${code === 0 ? '' : ': FAILED'}`);
      if (output.trim() !== '') process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      resolve(code ?? 1);
    });
  });
}

const done = new Set();
const failed = new Set();
const waiting = [...packages];
const running = new Set();
await new Promise((resolveAll) => {
  const next = () => {
    // A package whose dependency failed is not built (its declarations need the dependency's).
    for (const pkg of [...waiting]) {
      if (pkg.internal.some((dep) => failed.has(dep))) {
        waiting.splice(waiting.indexOf(pkg), 1);
        failed.add(pkg.name);
        console.error(`not building ${pkg.name}: a package it depends on failed`);
      }
    }
    while (running.size < jobs) {
      const pkg = waiting.find((candidate) => candidate.internal.every((dep) => done.has(dep)));
      if (pkg === undefined) break;
      waiting.splice(waiting.indexOf(pkg), 1);
      running.add(pkg.name);
      build(pkg).then((status) => {
        running.delete(pkg.name);
        (status === 0 ? done : failed).add(pkg.name);
        next();
      });
    }
    if (running.size === 0) resolveAll();
  };
  next();
});
if (failed.size > 0) {
  console.error(`build failed: ${[...failed].join(', ')}`);
  process.exit(1);
}
