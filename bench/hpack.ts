// HPACK decode cost per gRPC header block (packages/core/src/h2/hpack.ts), which runs twice per call
// on the lean HTTP/2 engine: the response headers and the trailers. Blocks as a gRPC server sends them:
// - steady: every field already in the dynamic table (what nghttp2 and gRPC C-core send once a
//   connection has carried a call), so each field is one indexed octet;
// - cold: every field a literal with incremental indexing, Huffman-coded, as on a connection's first
//   call (the decoder's table churns, as it would if every answer differed);
// and one request block encoded (the fields the engine sends, grpc-timeout changing every call).
// Side by side, in the same rounds, the floor: handing the same fields, already decoded, to the same
// callback (what any decoder must at least do). Prints ns per block (median of the rounds) and the
// ratio to the floor. Times are CPU time of this process (GC threads included), not wall time.
//   node_modules/.bin/tsx bench/hpack.ts [--rounds 7] [--iterations 200000]
import { loadavg } from 'node:os';
import { HpackDecoder, HpackEncoder } from '../packages/core/src/h2/hpack.js';

type Field = readonly [string, string];

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const ROUNDS = option('rounds', 7);
const ITERATIONS = option('iterations', 200_000);

const headers: Field[] = [
  [':status', '200'],
  ['content-type', 'application/grpc'],
  ['grpc-accept-encoding', 'identity,deflate,gzip'],
  ['grpc-encoding', 'identity'],
];
const trailers: Field[] = [
  ['grpc-status', '0'],
  ['grpc-message', ''],
];
const request: Field[] = [
  [':method', 'POST'],
  [':scheme', 'http'],
  [':path', '/inference.GRPCInferenceService/ModelInfer'],
  [':authority', '127.0.0.1:8001'],
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
  ['user-agent', 'infergate/0.1'],
  ['grpc-timeout', '30000m'],
];
const indexedRequestFields = new Set([':path', ':authority', 'content-type', 'te', 'user-agent']);

/** The block a server sends first (literals, Huffman, indexed), then the one it sends once they are in its table. */
function blocks(fields: readonly Field[]): { cold: Buffer; steady: Buffer } {
  const encoder = new HpackEncoder();
  const cold = encoder.encode(fields, () => true);
  return { cold, steady: encoder.encode(fields, () => true) };
}

let sink = 0;
const onHeader = (name: string, value: string) => {
  sink += name.length + value.length;
};

/** CPU time (not wall time: the machine is shared, and a descheduled loop is not slower) per run, in ns. */
function time(run: () => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) run();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / ITERATIONS;
}

const arms: Record<string, () => () => void> = {};
for (const [label, fields] of [
  ['headers', headers],
  ['trailers', trailers],
] as const) {
  const { cold, steady } = blocks(fields);
  arms[`decode ${label}, steady (${steady.length} octets)`] = () => {
    const decoder = new HpackDecoder();
    decoder.decode(cold, onHeader);
    return () => decoder.decode(steady, onHeader);
  };
  arms[`decode ${label}, cold (${cold.length} octets)`] = () => {
    // One decoder throughout: its table fills, then every block evicts the oldest entries.
    const decoder = new HpackDecoder(4096);
    return () => decoder.decode(cold, onHeader);
  };
  arms[`floor ${label} (fields handed over)`] = () => () => {
    for (const [name, value] of fields) onHeader(name, value);
  };
}
arms['encode request, steady'] = () => {
  const encoder = new HpackEncoder();
  let n = 0;
  const fields = request.map(([name, value]) => [name, value] as [string, string]);
  return () => {
    (fields[7] as [string, string])[1] = `${30000 + (n++ % 1000)}m`;
    sink += encoder.encode(fields, (name) => indexedRequestFields.has(name)).length;
  };
};

const results = new Map<string, number[]>(Object.keys(arms).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  // Alternate the order of the arms between rounds.
  const names = round % 2 === 0 ? Object.keys(arms) : Object.keys(arms).reverse();
  for (const name of names) results.get(name)?.push(time((arms[name] as () => () => void)()));
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const floor = (label: string) => median(results.get(`floor ${label} (fields handed over)`) ?? []);
console.log(
  `HPACK, ${ROUNDS} rounds × ${ITERATIONS} blocks, node ${process.version}, load ${loadavg()[0]?.toFixed(1)}`,
);
for (const [name, values] of results) {
  const label = name.includes('trailers') ? 'trailers' : 'headers';
  const ratio = name.startsWith('decode')
    ? `  (${(median(values) / floor(label)).toFixed(1)}× the floor)`
    : '';
  console.log(`${name.padEnd(48)} ${median(values).toFixed(0).padStart(6)} ns/block${ratio}`);
}
if (sink === 0) console.log('');
