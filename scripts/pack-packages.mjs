// Packs every package under packages/ once (pnpm pack: workspace: ranges become versions, as npm
// users get them) for the checks that need tarballs: scripts/check-packages.mjs (metadata, publint,
// attw) and scripts/check-install-size.mjs. npm test packs in its packages step into .tmp/packed and
// the install-size step reuses those tarballs; either script run alone packs for itself.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');
/** What a packing run leaves next to its tarballs, for a later script to reuse them. */
const INDEX = 'packed.json';

/** The pinned pnpm: the devDependency, one on PATH of that version, else npx. */
export function pnpmCommand() {
  const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager;
  const version = pinned.split('@')[1];
  for (const candidate of [join(root, 'node_modules', '.bin', 'pnpm'), 'pnpm']) {
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (probe.status === 0 && probe.stdout.trim() === version) return [candidate, []];
  }
  return ['npx', ['--yes', pinned]];
}

/**
 * Packs each package into `destination` and records what it packed there. Returns, per package
 * directory name: `{ dir, name, private, tarball, files }` (`files`: the tarball's paths).
 */
export function packPackages(destination) {
  mkdirSync(destination, { recursive: true });
  // A failed run leaves no index, so nothing reuses a partial set.
  rmSync(join(destination, INDEX), { force: true });
  const [pnpm, prefix] = pnpmCommand();
  const packed = [];
  for (const folder of readdirSync(packagesDir).sort()) {
    const dir = join(packagesDir, folder);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const result = spawnSync(pnpm, [...prefix, 'pack', '--json', '--pack-destination', destination], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (result.status !== 0) {
      throw new Error(`pnpm pack failed for ${manifest.name}:\n${result.stdout}${result.stderr}`);
    }
    const report = JSON.parse(result.stdout);
    packed.push({
      folder,
      dir,
      name: manifest.name,
      private: manifest.private === true,
      tarball: report.filename,
      files: report.files.map((file) => file.path),
    });
  }
  writeFileSync(join(destination, INDEX), `${JSON.stringify(packed, null, 2)}\n`);
  return packed;
}

/** The tarballs a packing run left in `destination`, or undefined when there are none (all or nothing). */
export function packedBefore(destination) {
  const index = join(destination, INDEX);
  if (!existsSync(index)) return undefined;
  const packed = JSON.parse(readFileSync(index, 'utf8'));
  return packed.every((entry) => existsSync(entry.tarball)) ? packed : undefined;
}
