// pnpm bench [suite ...] [--quick] [--summary] — runs benchmark suites from bench/suites/ (never part
// of the test command), then prints every named figure of bench/results/*.json against its target.
//   --quick     suites that support it measure shorter (documented in docs/benchmarks.md)
//   --summary   print the summary of the existing result files without running anything
// Each suite runs in a process of its own (bench/run-suite.ts). A suite that fails is reported and the
// others still run; the exit code is then 1.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DIR } from './lib.js';
import { readResults, summarize, summaryTable } from './summary.js';

const available = readdirSync(join(BENCH_DIR, 'suites'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort();
const BOOLEAN_FLAGS = new Set([
  '--quick',
  '--summary',
  '--no-triton',
  '--triton-only',
  '--no-python',
  '--in-process',
]);
const args = process.argv.slice(2);
// A word after a `--flag` that takes a value is that value, not a suite.
const words = args.filter(
  (arg, index) => !arg.startsWith('--') && (index === 0 || !isValueFlag(args[index - 1] as string)),
);
function isValueFlag(arg: string): boolean {
  return arg.startsWith('--') && !BOOLEAN_FLAGS.has(arg);
}
const unknown = words.filter((word) => !available.includes(word));
if (unknown.length > 0) {
  console.error(`unknown suite(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}
const suites = words.length > 0 ? words : available;
const resultsDir = join(BENCH_DIR, 'results');
const failed: string[] = [];
const seconds: Record<string, number> = {};
const started = performance.now();

// The command line less the suites' names: what each suite's process is given after its name.
const flags = args.filter(
  (arg, index) => arg.startsWith('--') || (index > 0 && isValueFlag(args[index - 1] as string)),
);

if (!args.includes('--summary')) {
  for (const suite of suites) {
    console.log(`\n═══ bench ${suite} ═══`);
    const suiteStarted = performance.now();
    // Each suite in a process of its own (bench/run-suite.ts says why), with this one's Node flags.
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, join(BENCH_DIR, 'run-suite.ts'), suite, ...flags],
      {
        stdio: 'inherit',
      },
    );
    if (child.status !== 0) {
      failed.push(suite);
      console.error(
        `bench ${suite} failed: ${child.error?.message ?? `exit ${child.status ?? child.signal}`}`,
      );
    }
    seconds[suite] = (performance.now() - suiteStarted) / 1000;
  }
}

const rows = summarize(readResults(resultsDir, words.length > 0 ? suites : undefined));
console.log(`\n═══ summary: named figures against their targets (bench/results/*.json) ═══\n`);
console.log(summaryTable(rows));
if (Object.keys(seconds).length > 0) {
  const timing = Object.entries(seconds)
    .map(([suite, value]) => `${suite} ${value.toFixed(0)} s`)
    .join(', ');
  console.log(`\ntime: ${((performance.now() - started) / 60_000).toFixed(1)} min (${timing})`);
}
if (failed.length > 0) {
  console.error(`\nfailed suite(s): ${failed.join(', ')}`);
  process.exitCode = 1;
}
