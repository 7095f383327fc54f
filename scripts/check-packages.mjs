#!/usr/bin/env node
// publint and @arethetypeswrong/cli on every built package: what npm users would install must
// resolve for ESM and CJS importers, with types, in Node 16+ resolution modes.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');
let failures = 0;
for (const name of readdirSync(packagesDir)) {
  const dir = join(packagesDir, name);
  for (const [tool, args] of [
    ['publint', ['--strict']],
    ['attw', ['--pack', '.', '--profile', 'node16', '--format', 'ascii']],
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
process.exit(failures === 0 ? 0 : 1);
