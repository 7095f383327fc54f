// One engine in a closed loop against a running server, for syscall counts (strace -c) and write
// policies: how many requests each socket write carries, and whether client and server overlap.
//   strace -f -c -e trace=write,writev,read -- node --conditions=@infergate/source --import tsx \
//     bench/profile-writes.ts --url 127.0.0.1:PORT --concurrency 64 --seconds 5 [--module PATH]
// --module: another ESM build of core (e.g. main's, on node:http2) to run instead of this one.
import { pathToFileURL } from 'node:url';
import { createTritonClient } from '@infergate/core';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag } from './lib.js';

const url = flag('url') as string;
const elements = Number(flag('elements') ?? 16);
const concurrency = Number(flag('concurrency') ?? 64);
const seconds = Number(flag('seconds') ?? 5);
const module = flag('module');
const create = module
  ? ((await import(pathToFileURL(module).href)) as { createTritonClient: typeof createTritonClient })
      .createTritonClient
  : createTritonClient;
const client = create({ url, engine: 'http2', enableGpuIpc: false, timeoutMs: 60_000 });
try {
  const data = Float32Array.from({ length: elements }, () => Math.random());
  const call = () =>
    client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data }]);
  const warmUp = await closedLoopWindow(call, concurrency, 1000);
  const sample = await closedLoopWindow(call, concurrency, seconds * 1000);
  console.log(
    JSON.stringify({
      module: module ?? 'this build',
      policy: process.env.INFERGATE_H2_WRITE_POLICY ?? 'now',
      concurrency,
      calls: warmUp.completed + sample.completed,
      errors: warmUp.errors + sample.errors,
      itemsPerSec: Math.round((sample.completed * 1000) / sample.elapsedMs),
      cpuMsPerCall: Number((sample.cpuMs / sample.completed).toFixed(3)),
    }),
  );
} finally {
  await client.close();
}
