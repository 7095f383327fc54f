// Reads a V8 .cpuprofile and prints the call tree below the functions matching PATTERN (all roots
// when omitted), merged by function, with inclusive and self time in µs per call; branches under
// MIN µs per call are left out. Where profile-summary.mjs says which functions cost the time, this
// says who called them (for example which part of `ClientHttp2Session.request` a call pays for).
//   node bench/profile-tree.mjs FILE.cpuprofile CALLS [MIN] [PATTERN]
import { readFileSync } from 'node:fs';

const [file, callsText, minText, pattern] = process.argv.slice(2);
if (!file || !callsText) {
  console.error('usage: node bench/profile-tree.mjs FILE.cpuprofile CALLS [MIN] [PATTERN]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const calls = Number(callsText);
const min = Number(minText ?? 2);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const label = (node) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber + 1}`;

const selfTime = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const inclusive = new Map();
function total(id) {
  const known = inclusive.get(id);
  if (known !== undefined) return known;
  let sum = selfTime.get(id) ?? 0;
  for (const child of byId.get(id).children ?? []) sum += total(child);
  inclusive.set(id, sum);
  return sum;
}

/** Nodes of the same function under one parent path are merged into one line. */
function print(ids, depth) {
  const merged = new Map();
  for (const id of ids) {
    const node = byId.get(id);
    const key = label(node);
    const entry = merged.get(key) ?? { total: 0, self: 0, children: [] };
    entry.total += total(id);
    entry.self += selfTime.get(id) ?? 0;
    entry.children.push(...(node.children ?? []));
    merged.set(key, entry);
  }
  for (const [key, entry] of [...merged.entries()].sort((a, b) => b[1].total - a[1].total)) {
    if (entry.total / calls < min || key.startsWith('(idle)')) continue;
    const incl = (entry.total / calls).toFixed(1).padStart(8);
    const self = (entry.self / calls).toFixed(1).padStart(7);
    console.log(`${incl} ${self}  ${'  '.repeat(depth)}${key}`);
    print(entry.children, depth + 1);
  }
}

let roots = [profile.nodes[0].id];
if (pattern) {
  const match = new RegExp(pattern);
  const matches = (id) => match.test(label(byId.get(id)));
  // The outermost matches only, so nested calls are not counted twice.
  roots = profile.nodes
    .map((node) => node.id)
    .filter((id) => {
      if (!matches(id)) return false;
      for (let up = parentOf.get(id); up !== undefined; up = parentOf.get(up)) if (matches(up)) return false;
      return true;
    });
}
console.log('  incl µs  self µs  (per call)');
print(roots, 0);
