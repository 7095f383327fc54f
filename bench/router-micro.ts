// The router's own CPU per call with nothing else in the way: 64 closed-loop workers over an
// in-memory transport that answers at once, called directly and through `createRouter` with one
// target (and, with `--base DIR`, through another build of the router, for a before ÷ after), arms
// rotated each round; CPU per call (user + system) and µs added per call. Built packages:
//   node scripts/bootstrap.mjs --dist bench/router-micro.ts [--rounds 8] [--calls 200000] [--base DIR]
// A build from before 2026-12-01 23:00 imports opossum: DIR/node_modules/opossum must resolve (opossum 9).
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildInferRequest, type InferResponse, type InferTransport } from '@infergate/core';
import { createRouter } from '@infergate/router';
import { flag, median } from './lib.js';

const rounds = Number(flag('rounds') ?? 8);
const perSlice = Number(flag('calls') ?? 200_000);
const base = flag('base');
const request = buildInferRequest('identity', [
  { name: 'INPUT0', datatype: 'FP32', shape: [16], data: new Float32Array(16) },
]);
const response: InferResponse = { modelName: 'identity', outputs: [] } as unknown as InferResponse;
const memory = {
  infer: () => Promise.resolve(response),
  stream: () => {
    throw new Error('no streams');
  },
  close: async () => {},
} as unknown as InferTransport;
const arms: Record<string, InferTransport> = {
  direct: memory,
  router: createRouter({ targets: [{ name: 'only', transport: memory }] }),
};
if (base !== undefined) {
  const module = (await import(pathToFileURL(resolve(base, 'index.js')).href)) as {
    createRouter: typeof createRouter;
  };
  arms.base = module.createRouter({ targets: [{ name: 'only', transport: memory }] });
}
const names = Object.keys(arms);

async function slice(transport: InferTransport, calls: number): Promise<number> {
  let left = calls;
  const cpu = process.cpuUsage();
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      await transport.infer(request, {});
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / calls;
}

for (const name of names) await slice(arms[name] as InferTransport, perSlice / 4);
const seen: Record<string, number[]> = {};
for (let round = 0; round < rounds; round++) {
  for (const name of names.map((_, index) => names[(index + round) % names.length] as string)) {
    const cpu = await slice(arms[name] as InferTransport, perSlice);
    seen[name] = [...(seen[name] ?? []), cpu];
  }
}
const summary: Record<string, unknown> = { rounds, perSlice, load: loadavg().map((x) => +x.toFixed(1)) };
for (const name of names) summary[`${name}_us`] = +median(seen[name] as number[]).toFixed(2);
for (const name of names.filter((name) => name !== 'direct'))
  summary[`${name}_added_us`] = +(median(seen[name] as number[]) - median(seen.direct as number[])).toFixed(
    2,
  );
console.log(JSON.stringify(summary));
for (const name of names)
  if (name !== 'direct') await (arms[name] as unknown as { close(): Promise<void> }).close();
