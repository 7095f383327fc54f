// One suite of `pnpm bench`, in a process of its own: bench/run.ts starts one of these per suite, with
// the same Node flags (tsx's loader, the conditions) and the command line's flags after the suite's
// name. Run in one process, each suite carried what the suites before it had loaded and kept: the
// unary suite, last, measured the default call at 1 MiB with 1.9–2.0 ms of client CPU per call,
// against 1.6–1.7 in the next full run with each suite in its own process (docs/benchmarks/unary-log.md,
// 2026-12-03), because V8's collections of its fresh answers marked a larger heap.
//   node scripts/bootstrap.mjs --dist bench/run-suite.ts SUITE [flags]
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR } from './lib.js';

const suite = process.argv[2];
if (suite === undefined || suite.startsWith('--')) {
  console.error('usage: run-suite.ts SUITE [flags]');
  process.exit(2);
}
const module = (await import(pathToFileURL(join(BENCH_DIR, 'suites', `${suite}.ts`)).href)) as {
  run(): Promise<void>;
};
await module.run();
