// Suite `coldstart`: what a serverless cold start pays for each package — the time of
// `await import(pkg)` in a fresh Node process (median of several processes, the built ESM output)
// and the size of the built entry (raw and gzip). Baseline arm: importing an empty module.
//   pnpm build && pnpm bench coldstart [--runs 15]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type BenchCase, flag, median, packageVersion, ROOT, report } from '../lib.js';

const probe = `const started = performance.now();
await import(process.argv[2]);
process.stdout.write(String(performance.now() - started));`;

function importMs(specifier: string, script: string): number {
  const result = spawnSync(process.execPath, [script, specifier], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`import of ${specifier} failed: ${result.stderr}`);
  return Number(result.stdout);
}

export async function run(): Promise<void> {
  const runs = Number(flag('runs') ?? 15);
  const script = join(tmpdir(), `infergate-coldstart-${process.pid}.mjs`);
  const empty = join(tmpdir(), `infergate-empty-${process.pid}.mjs`);
  writeFileSync(script, probe);
  writeFileSync(empty, 'export {};\n');
  const packages = readdirSync(join(ROOT, 'packages')).filter((name) =>
    existsSync(join(ROOT, 'packages', name, 'dist', 'index.js')),
  );
  if (!packages.includes('core')) throw new Error('build first: pnpm build');
  const cases: BenchCase[] = [];
  const baseline: number[] = [];
  const times = new Map<string, number[]>(packages.map((name) => [name, []]));
  for (let run = 0; run < runs; run++) {
    baseline.push(importMs(empty, script));
    for (const name of packages)
      times.get(name)?.push(importMs(join(ROOT, 'packages', name, 'dist', 'index.js'), script));
  }
  cases.push({ name: 'empty module', arm: 'baseline', load: 'import', p50Ms: median(baseline) });
  const ratios: Record<string, number> = {};
  const versions: Record<string, string> = {};
  for (const name of packages) {
    const entry = join(ROOT, 'packages', name, 'dist', 'index.js');
    const bytes = statSync(entry).size;
    const gzip = gzipSync(readFileSync(entry)).byteLength;
    const ms = median(times.get(name) ?? []);
    cases.push({
      name: `@infergate/${name}`,
      arm: name,
      load: 'import',
      p50Ms: ms,
      extra: { entryBytes: bytes, entryGzipBytes: gzip },
    });
    versions[`@infergate/${name}`] = packageVersion(name);
    if (name === 'core') ratios.core_import_ms = ms;
  }
  report({
    suite: 'coldstart',
    versions,
    cases,
    ratios,
    targets: { core_import_ms: '<= 60' },
    command: 'pnpm build && pnpm bench coldstart',
  });
}
