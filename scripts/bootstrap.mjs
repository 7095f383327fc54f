#!/usr/bin/env node
// Makes a fresh clone runnable with only Node and npm: installs the pinned pnpm (through npx when it is
// not on PATH) and the workspace's dependencies from the lockfile, then runs the given script with
// node_modules/.bin first on PATH, so tools that spawn `pnpm` or `buf` find the pinned devDependencies.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager; // "pnpm@x.y.z"
const pinnedVersion = pinned.split('@')[1];

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const localBin = join(root, 'node_modules', '.bin');

function pnpmCommand() {
  // After the first install the pinned pnpm is a devDependency; before it, a global one or npx.
  const local = join(localBin, process.platform === 'win32' ? 'pnpm.cmd' : 'pnpm');
  const localProbe = spawnSync(local, ['--version'], { cwd: root, encoding: 'utf8' });
  if (localProbe.status === 0 && localProbe.stdout.trim() === pinnedVersion) return [local, []];
  const probe = spawnSync('pnpm', ['--version'], { cwd: root, encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === pinnedVersion) return ['pnpm', []];
  return ['npx', ['--yes', pinned]];
}

const [pnpm, prefix] = pnpmCommand();
const marker = join(root, 'node_modules', '.modules.yaml');
if (!existsSync(marker) || process.env.CI === 'true') {
  const status = run(pnpm, [...prefix, 'install', '--frozen-lockfile']);
  if (status !== 0) {
    console.error(
      `\ninfergate: '${pinned} install' failed (exit ${status}). Node ${process.version} and npm are needed.`,
    );
    process.exit(status);
  }
}

// `--dist`: run a TypeScript entry against the built packages (dist/), as users get them — benchmarks
// use it, since running from source adds the transpiler's helpers to every hot function.
const dist = process.argv[2] === '--dist';
const [script, ...args] = process.argv.slice(dist ? 3 : 2);
if (script === undefined) process.exit(0);
const tsx = join(root, 'node_modules', '.bin', 'tsx');
// TypeScript entry points run from source: the private "@infergate/source" export condition maps workspace packages to src/.
const command = script.endsWith('.ts')
  ? [tsx, [...(dist ? [] : ['--conditions=@infergate/source']), join(root, script), ...args]]
  : [process.execPath, [join(root, script), ...args]];
const env = { ...process.env, PATH: `${localBin}${delimiter}${process.env.PATH ?? ''}` };
process.exit(run(command[0], command[1], { env }));
