#!/usr/bin/env node
// Builds every publishable package (tsup: ESM + CJS + .d.ts), two at a time unless --jobs says
// otherwise (npm test builds one at a time: its unit lane has the other core), the largest first. No build reads another package's dist/: a package's imports of the others are its
// dependencies or peers, which tsup leaves external, and its declarations are generated against
// their sources (tsconfig.json's "@infergate/source" condition). Each build's output is printed
// whole when it ends.
//   node scripts/build.mjs [--jobs N]
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');
const argv = process.argv.slice(2);
const jobsIndex = argv.indexOf('--jobs');
const jobs = jobsIndex === -1 ? 2 : Math.max(1, Number.parseInt(argv[jobsIndex + 1] ?? '', 10) || 1);

/** Bytes of the TypeScript under `dir`, tests left out: how much a build has to compile. */
function sourceBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += sourceBytes(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) total += statSync(path).size;
  }
  return total;
}

// The largest first, so that the last builds to start are short ones.
const packages = readdirSync(packagesDir)
  .map((folder) => {
    const dir = join(packagesDir, folder);
    const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return { dir, name, size: sourceBytes(join(dir, 'src')) };
  })
  .sort((a, b) => b.size - a.size || a.name.localeCompare(b.name));

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

const failed = [];
const queue = [...packages];
async function worker() {
  for (let pkg = queue.shift(); pkg !== undefined; pkg = queue.shift()) {
    if ((await build(pkg)) !== 0) failed.push(pkg.name);
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, packages.length) }, worker));
if (failed.length > 0) {
  console.error(`build failed: ${failed.join(', ')}`);
  process.exit(1);
}
