// The README's demo: starts the embedded reference server (or uses --url for a real Triton) and
// runs a few inferences with readable output. The full multi-tenant demo arrives with the batcher,
// router and cost packages.
import { performance } from 'node:perf_hooks';
import { createTritonClient, InfergateError } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';

const urlFlag = process.argv.indexOf('--url');
const externalUrl = urlFlag === -1 ? undefined : process.argv[urlFlag + 1];

function line(label: string, value: string) {
  console.log(`  ${label.padEnd(28)} ${value}`);
}

let server: TestServer | undefined;
if (externalUrl === undefined) {
  server = await startTestServer();
  console.log(`\ninfergate demo — embedded reference server at ${server.url}\n`);
} else {
  console.log(`\ninfergate demo — Triton at ${externalUrl}\n`);
}
const client = createTritonClient({ url: externalUrl ?? (server as TestServer).url, timeoutMs: 5000 });

try {
  const metadata = await client.serverMetadata();
  line('server', `${metadata.name} ${metadata.version}`);
  line('live / ready', `${await client.serverLive()} / ${await client.serverReady()}`);

  const ones = new Float32Array(16).fill(1);
  const twos = new Float32Array(16).fill(2);
  const started = performance.now();
  const addSub = await client.infer('add_sub', [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: twos },
    { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: ones },
  ]);
  const took = (performance.now() - started).toFixed(2);
  line(
    'add_sub OUTPUT0 (2 + 1)',
    `${Array.from(addSub.output('OUTPUT0').data as Float32Array)
      .slice(0, 4)
      .join(', ')}, … (${took} ms)`,
  );
  line(
    'add_sub OUTPUT1 (2 − 1)',
    `${Array.from(addSub.output('OUTPUT1').data as Float32Array)
      .slice(0, 4)
      .join(', ')}, …`,
  );

  if (server !== undefined) {
    const words = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'BYTES', shape: [3], data: ['héllo', '', 'wörld ✓'] },
    ]);
    line('identity BYTES', JSON.stringify(words.output('OUTPUT0').strings()));
    const halves = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP16', data: [0.1, 1.5, 65504] },
    ]);
    line('identity FP16 (rounded)', Array.from(halves.output('OUTPUT0').data as Float32Array).join(', '));

    const calls = 64;
    const concurrentStart = performance.now();
    await Promise.all(
      Array.from({ length: calls }, (_, index) =>
        client.infer('simulated_gpu', [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [index, 1, 2, 3] },
        ]),
      ),
    );
    const seconds = (performance.now() - concurrentStart) / 1000;
    line(
      `simulated_gpu ×${calls} unbatched`,
      `${(calls / seconds).toFixed(0)} items/s (one GPU slot, 2 ms + 0.05 ms/row)`,
    );
  }

  try {
    await client.infer('no_such_model', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
  } catch (error) {
    if (!(error instanceof InfergateError)) throw error;
    line('unknown model', `${error.code} (retryable: ${error.retryable})`);
  }
  try {
    await client.infer('add_sub', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: [1, 2, 3] }]);
  } catch (error) {
    if (!(error instanceof InfergateError)) throw error;
    line('bad shape (before network)', `${error.code}: ${error.rawMessage}`);
  }
  console.log('\ndone.\n');
} finally {
  await client.close();
  await server?.stop();
}
