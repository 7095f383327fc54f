// What one call of the batcher suite's overload arm allocates on the client, admitted and refused,
// and where: the arm's client (`createTritonClient` over `createMicroBatcher` with the overload
// case's options: batches of 8, `maxQueueSize` 16, `maxQueueWaitMs` = `maxQueueDelayMs` = 10) in
// front of an in-memory transport instead of the reference server, so that only the client's own
// allocations are counted. Each scenario runs under V8's sampling heap profiler with objects that
// minor and major GCs collected kept in the profile (every allocation counts, not only what
// survives); bytes per call are the profile's total over the calls made, and the functions that
// allocated most are listed (self bytes, their share). The CPU per call is from a run without the
// profiler, just before.
//   node scripts/bootstrap.mjs --dist bench/overload-alloc.ts [--calls 20000] [--top 12]
//
// Scenarios:
// - harness: the overload probe's per-call record and inputs and the load generator's per-call
//   promises, with a call that rejects at once (what the benchmark itself allocates);
// - refused: the same through the client and batcher while every slot is taken and the queue's wait
//   is over `maxQueueWaitMs` (QUEUE_FULL from admission, the typical call under 4× overload);
// - admitted: calls answered in batches of 8 by the in-memory transport (its answer's allocation is
//   counted too, under `transport`).
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { createMicroBatcher } from '@infergate/batcher';
import {
  type CallOptions,
  createTritonClient,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  type InputTensor,
} from '@infergate/core';
import { flag } from './lib.js';
import { OverloadProbe } from './overload-probe.js';

const calls = Number(flag('calls') ?? 20_000);
const top = Number(flag('top') ?? 12);

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** An in-memory transport: answers a batch with its inputs as outputs, or holds it while `hold`. */
class MemoryTransport implements InferTransport {
  hold = false;
  readonly #held: (() => void)[] = [];
  delayMs = 0;
  infer(request: InferRequest, _options: CallOptions): Promise<InferResponse> {
    const answer = (): InferResponse => ({
      model: request.model,
      modelVersion: '1',
      id: '',
      outputs: request.inputs.map((input) => ({ ...input, name: 'OUTPUT0' })),
      parameters: {},
    });
    if (this.hold) return new Promise((resolve) => this.#held.push(() => resolve(answer())));
    if (this.delayMs > 0) return new Promise((resolve) => setTimeout(() => resolve(answer()), this.delayMs));
    return new Promise((resolve) => setImmediate(() => resolve(answer())));
  }
  async *stream(): AsyncIterable<InferResponse> {
    yield* [];
    throw new Error('not used');
  }
  release(): void {
    for (const resume of this.#held.splice(0)) resume();
  }
}

function overloadClient(transport: InferTransport) {
  const batcher = createMicroBatcher(transport, {
    maxBatchSize: 8,
    maxQueueSize: 16,
    maxQueueDelayMs: 10,
    maxQueueWaitMs: 10,
    flush: 'adaptive',
    models: { simulated_gpu: { maxBatchSize: 8 } },
  });
  const client = createTritonClient({ url: 'grpc://127.0.0.1:1', enableGpuIpc: false, transport: batcher });
  return { batcher, client };
}

const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');

async function profiled(name: string, made: () => number, run: () => Promise<void>) {
  // Warm up (optimised code, the lane's state), time a run, then profile one.
  await run();
  const timedFrom = made();
  const cpu = process.cpuUsage();
  await run();
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / (made() - timedFrom);
  const before = made();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 128,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await run();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode };
  };
  const count = made() - before;
  const bySelf = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.split('/').slice(-2).join('/');
    const key = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    bySelf.set(key, (bySelf.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  console.log(
    `\n${name}: ${count} calls, ${(total / count).toFixed(0)} bytes allocated per call, ${cpuUs.toFixed(2)} µs of CPU per call (unprofiled run)`,
  );
  for (const [key, bytes] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `  ${(bytes / count).toFixed(0).padStart(6)} B/call ${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${key}`,
    );
  }
}

const refusal = Object.assign(new Error('refused'), { code: 'QUEUE_FULL' });
// The generator as the overload arm drives it, at a rate no process reaches here (it sends back to
// back, yielding every 64 calls).
const openLoop = (probe: OverloadProbe, send: (inputs: InputTensor[]) => Promise<unknown>) =>
  probe.openLoop(send, 1e7, (calls / 1e7) * 1000);

// 1. The harness alone: the probe's records and inputs, the generator; the call rejects at once.
{
  const probe = new OverloadProbe();
  let made = 0;
  await profiled(
    'harness (probe records + generator; the call itself rejects at once)',
    () => made,
    async () => {
      const sample = await openLoop(probe, () => Promise.reject(refusal));
      made += sample.refused + sample.completed + sample.failed;
    },
  );
}

// 2. Refused: both slots taken by held batches, 16 calls queued, the lane's round trips learned.
{
  const transport = new MemoryTransport();
  const { batcher, client } = overloadClient(transport);
  const probe = new OverloadProbe();
  const ring = new Float32Array(16 * 1024);
  let next = 0;
  const inputs = (): InputTensor[] => {
    const offset = (next++ % 1024) * 16;
    return [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: ring.subarray(offset, offset + 16) }];
  };
  // Learn round trips of about 5 ms, then hold: the next calls fill both slots and the queue.
  transport.delayMs = 5;
  for (let round = 0; round < 20; round++) {
    await Promise.all(Array.from({ length: 8 }, () => client.infer('simulated_gpu', inputs())));
  }
  transport.hold = true;
  const queued: Promise<unknown>[] = [];
  for (let index = 0; index < 40; index++)
    queued.push(client.infer('simulated_gpu', inputs()).catch(() => undefined));
  let made = 0;
  let refused = 0;
  await profiled(
    'refused (QUEUE_FULL from admission, through client and batcher; harness included)',
    () => made,
    async () => {
      const sample = await openLoop(probe, (traced) => client.infer('simulated_gpu', traced));
      made += sample.refused + sample.completed + sample.failed;
      refused += sample.refused;
    },
  );
  console.log(`  (${refused} of ${made} refused)`);
  transport.hold = false;
  transport.release();
  await Promise.all(queued);
  transport.release();
  await batcher.close();
  await client.close();
}

// 3. Admitted: 8 closed-loop callers, each batch answered by the in-memory transport; inputs are
// views of a ring, as the probe makes them (no probe record).
{
  const transport = new MemoryTransport();
  const { batcher, client } = overloadClient(transport);
  const ring = new Float32Array(16 * 1024);
  let made = 0;
  await profiled(
    'admitted (answered in batches of 8; the in-memory transport included)',
    () => made,
    async () => {
      const until = made + calls / 4;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (made < until) {
            const offset = (made++ % 1024) * 16;
            await client.infer('simulated_gpu', [
              { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: ring.subarray(offset, offset + 16) },
            ]);
          }
        }),
      );
    },
  );
  console.log(`  mean batch ${batcher.stats().meanBatchSize.toFixed(2)}`);
  await batcher.close();
  await client.close();
}
session.disconnect();
console.log(`\n(${performance.now().toFixed(0)} ms)`);
