// Reads a V8 .cpuprofile and prints the functions with the most self time, in µs per call.
//   node bench/profile-summary.mjs FILE.cpuprofile CALLS [TOP]
import { readFileSync } from 'node:fs';

const [file, callsText, topText] = process.argv.slice(2);
if (!file || !callsText) {
  console.error('usage: node bench/profile-summary.mjs FILE.cpuprofile CALLS [TOP]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const calls = Number(callsText);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
// timeDeltas[i] is the time before samples[i]; attribute it to that sample's node.
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]);
  const frame = node.callFrame;
  const where = frame.url
    ? frame.url.replace(/^.*\/(node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?)?/, '')
    : '';
  const key = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((sum, value) => sum + value, 0);
const idle = [...self.entries()]
  .filter(([key]) => key.startsWith('(idle)'))
  .reduce((sum, [, v]) => sum + v, 0);
console.log(`busy ${((total - idle) / calls).toFixed(1)} µs per call over ${calls} calls`);
for (const [key, micros] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topText ?? 25))) {
  console.log(`${(micros / calls).toFixed(2).padStart(9)} µs  ${key}`);
}
