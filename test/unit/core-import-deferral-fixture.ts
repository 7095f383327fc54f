// Child process of core-import-deferral.test.ts: imports @infergate/core from source, then makes a
// client and at once one inference (or, given `stream`, two on a stream session), then a health
// call, and prints which heavy modules the process had loaded after the import, after the answers
// and after the health call.
import { createRequire, register } from 'node:module';
import { MessageChannel, type MessagePort } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const resolved = new Set<string>();
register('./module-load-hook.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });

/** Every URL the hook posted so far: it answers 'flush' after them, on the same port. */
function settle(port: MessagePort): Promise<void> {
  return new Promise((done) => {
    const onMessage = (message: string) => {
      if (message !== 'flushed') {
        resolved.add(message);
        return;
      }
      port.off('message', onMessage);
      done();
    };
    port.on('message', onMessage);
    port.postMessage('flush');
  });
}

// CommonJS packages that core requires lazily (lazy-modules.ts) show up in the require cache.
const requireCache = createRequire(import.meta.url).cache;
const heavy: Record<string, RegExp> = {
  protobufRuntime: /\/@bufbuild\/protobuf\//,
  generatedDescriptors: /\/packages\/core\/src\/gen\//,
  grpcWire: /\/packages\/core\/src\/internal\/grpc-wire\./,
  grpcJs: /\/@grpc\/grpc-js\//,
  zod: /\/node_modules\/zod\//,
  opentelemetryApi: /\/@opentelemetry\/api\//,
};

async function loaded(): Promise<string[]> {
  await settle(port1);
  const urls = [...resolved, ...Object.keys(requireCache)];
  return Object.entries(heavy)
    .filter(([, pattern]) => urls.some((url) => pattern.test(url)))
    .map(([name]) => name);
}

const steps: Record<string, string[]> = {};
const core = await import('@infergate/core');
steps.imported = await loaded();
const client = core.createTritonClient({ url: process.env.TRITON_URL ?? '', enableGpuIpc: false });
const output: unknown[] = [];
if (process.argv[2] === 'stream') {
  // The first call of the process on a stream session, made at once: its requests wait for the
  // wire code that the client started loading.
  const session = client.openStream();
  const first = session.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] }]);
  const second = session.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [2] }]);
  for (const responses of [first, second])
    for await (const result of responses) output.push(...result.output('OUTPUT0').toArray());
  await session.close();
} else {
  const result = await client.infer('identity', [
    { name: 'INPUT0', datatype: 'FP32', shape: [2], data: [1, 2] },
  ]);
  output.push(...result.output('OUTPUT0').toArray());
}
steps.called = await loaded();
// A call other than inference, which needs the protobuf runtime and the descriptors.
if (!(await client.serverLive())) throw new Error('the server is not live');
steps.managed = await loaded();
await client.close();
port1.close();
console.log(`RESULT ${JSON.stringify({ steps, output })}`);
