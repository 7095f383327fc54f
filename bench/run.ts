// pnpm bench [suite ...] — runs benchmark suites from bench/suites/ (never part of the test command).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR } from './lib.js';

const available = readdirSync(join(BENCH_DIR, 'suites'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort();
const asked = process.argv.slice(2).filter((arg) => !arg.startsWith('--') && available.includes(arg));
const unknown = process.argv
  .slice(2)
  .filter(
    (arg, index, all) =>
      !arg.startsWith('--') && !all[index - 1]?.startsWith('--') && !available.includes(arg),
  );
if (unknown.length > 0) {
  console.error(`unknown suite(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}
for (const suite of asked.length > 0 ? asked : available) {
  console.log(`\n═══ bench ${suite} ═══`);
  const module = (await import(pathToFileURL(join(BENCH_DIR, 'suites', `${suite}.ts`)).href)) as {
    run(): Promise<void>;
  };
  await module.run();
}
