// The in-memory ledger side by side with another build of @infergate/cost (e.g. main's), in one
// process: a baseline of two awaited no-ops, this build's reserve + settle and the other build's,
// interleaved each rep (the `cost` suite's loop; the figure is µs per call minus the baseline).
// Save the other build's dist inside packages/cost (its imports then resolve; `dist/` is ignored by
// git and biome), then:
//   mkdir -p packages/cost/base-build && cp -r packages/cost/dist packages/cost/base-build/   (on the other build)
//   node scripts/bootstrap.mjs --dist bench/cost-ab.ts --base packages/cost/base-build/dist [--calls 200000] [--reps 7]
// When core changed too, give the other build its own core (its imports resolve there first):
//   mkdir -p packages/cost/base-build/node_modules/@infergate/core
//   cp -r packages/core/dist packages/core/package.json packages/cost/base-build/node_modules/@infergate/core/
//   ln -s ../../../../../core/node_modules packages/cost/base-build/node_modules/@infergate/core/node_modules
// Both arms share one heap: garbage the other arm leaves in the old generation is collected during
// whichever arm runs, so a change in what survives shows less here than in separate processes.
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CostTracker } from '@infergate/cost';
import { flag, median } from './lib.js';
import { baselineLoop, budgets, type Ledger, ledgerLoop } from './suites/cost.js';

const calls = Number(flag('calls') ?? 200_000);
const reps = Number(flag('reps') ?? 7);
const base = flag('base');
const arms: Record<string, Ledger> = { this: new CostTracker({ budgets }) as unknown as Ledger };
if (base !== undefined) {
  const other = (await import(pathToFileURL(resolve(base, 'index.js')).href)) as {
    CostTracker: new (options: unknown) => Ledger;
  };
  arms.base = new other.CostTracker({ budgets });
}
await baselineLoop(20_000);
for (const tracker of Object.values(arms)) await ledgerLoop(tracker, 20_000);
const results: Record<string, number[]> = { baseline: [] };
for (const name of Object.keys(arms)) results[name] = [];
for (let rep = 0; rep < reps; rep++) {
  results.baseline?.push(await baselineLoop(calls));
  for (const [name, tracker] of Object.entries(arms)) results[name]?.push(await ledgerLoop(tracker, calls));
}
const baselineUs = median(results.baseline ?? []);
console.log(`load ${loadavg()[0]?.toFixed(2)}, ${calls} calls × ${reps} reps, medians (µs per call)`);
for (const [name, values] of Object.entries(results)) {
  const us = median(values);
  console.log(
    `${name.padEnd(8)} raw ${us.toFixed(3)}  minus baseline ${(us - baselineUs).toFixed(3)}  [${values.map((v) => v.toFixed(2)).join(' ')}]`,
  );
}
