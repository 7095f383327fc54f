// Summarises V8's `--trace-gc-nvp` lines (one per GC) read from a saved benchmark output, for the
// overload arm's GC attribution (bench/batcher-overload.ts --trace-gc): per kind (s = scavenge,
// mc = mark-compact, ms = minor mark-sweep) the count and pauses, and for every pause of
// --long ms or more (4 by default) what it was made of: bytes allocated since the previous GC,
// survivors copied within the young generation, bytes promoted to old space, and for a scavenge the
// time spent in its parallel phase (the part that waits for helper threads).
//   node scripts/bootstrap.mjs --dist bench/batcher-overload.ts --trace-gc > /tmp/overload.log
//   node scripts/bootstrap.mjs bench/gc-trace-summary.ts /tmp/overload.log [--long 4]
import { readFileSync } from 'node:fs';
import { flag } from './lib.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: gc-trace-summary.ts <log> [--long 4]');
const long = Number(flag('long') ?? 4);
const gcs = readFileSync(file, 'utf8')
  .split('\n')
  .filter((line) => line.includes(' pause=') && line.includes(' gc='))
  .map((line) => {
    const fields: Record<string, string> = {};
    for (const [, key, value] of line.matchAll(/ ([\w.]+)=(\S+)/g)) fields[key as string] = value as string;
    return fields;
  });
const num = (fields: Record<string, string>, key: string) => Number.parseFloat(fields[key] ?? '0') || 0;
const kib = (bytes: number) => Math.round(bytes / 1024);
const byKind = new Map<string, Record<string, string>[]>();
for (const gc of gcs) byKind.set(gc.gc ?? '?', [...(byKind.get(gc.gc ?? '?') ?? []), gc]);
for (const [kind, list] of byKind) {
  const pauses = list.map((gc) => num(gc, 'pause')).sort((a, b) => a - b);
  const at = (q: number) => pauses[Math.min(pauses.length - 1, Math.floor((q / 100) * pauses.length))] ?? 0;
  const sum = (key: string) => list.reduce((total, gc) => total + num(gc, key), 0);
  console.log(
    `${kind}: ${list.length} GCs, pause p50 ${at(50).toFixed(2)} p99 ${at(99).toFixed(2)} max ${(pauses.at(-1) ?? 0).toFixed(2)} ms, ` +
      `total ${pauses.reduce((a, b) => a + b, 0).toFixed(1)} ms; allocated ${kib(sum('allocated'))} KiB, ` +
      `promoted ${kib(sum('promoted'))} KiB, survived in new space ${kib(sum('new_space_survived'))} KiB`,
  );
}
console.log(`pauses of ${long} ms or more:`);
for (const gc of gcs.filter((entry) => num(entry, 'pause') >= long)) {
  const parallel = gc.gc === 's' ? ` scavenge.parallel ${num(gc, 'scavenge.parallel').toFixed(2)} ms,` : '';
  const mark =
    gc.gc === 'mc'
      ? ` mark ${num(gc, 'mark').toFixed(2)} evacuate ${num(gc, 'evacuate').toFixed(2)} sweep ${num(gc, 'sweep').toFixed(2)} ms,`
      : '';
  console.log(
    `  ${gc.gc} pause ${num(gc, 'pause').toFixed(2)} ms,${parallel}${mark} allocated ${kib(num(gc, 'allocated'))} KiB, ` +
      `survived ${kib(num(gc, 'new_space_survived'))} KiB, promoted ${kib(num(gc, 'promoted'))} KiB, ` +
      `heap ${kib(num(gc, 'total_size_before'))} → ${kib(num(gc, 'total_size_after'))} KiB`,
  );
}
