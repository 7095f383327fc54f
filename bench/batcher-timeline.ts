// The c64 cycle on a timeline: where the time between two executions of `simulated_gpu` goes. The
// reference server runs in a child process (this script with --serve) serving `timed_gpu`, a copy
// of `simulated_gpu` on the server's own simulated GPU that records, per execution, when it took
// the slot, when it ended, when the model returned, when the answer's stream was ended (the last
// JavaScript before node:http2 writes it) and the first two check phases after the end (node:http2
// writes the answer's HEADERS and DATA in one, its trailers in the next); this process records, per
// batch, when the batcher handed it to the transport and when the decoded answer came back. Both
// read the monotonic clock the processes share. Matched by the batch's first input value, each
// cycle splits into: request (batch sent → the model has the slot), execution (and its overrun of
// the cost), the server's answer path (end → returned → stream ended → turn 1 → turn 2), answer
// (end → the answer decoded here) and client (answer → next batch sent: splitting, the callers
// answered, their new calls, the batch built). ms as p10 / p50 / p90 (mean).
//   node scripts/bootstrap.mjs --dist bench/batcher-timeline.ts [--seconds 2] [--rounds 3]
//       [--concurrency 64] [--flush adaptive|fixed] [--profile-server DIR]
// (--profile-server: the child runs under --cpu-prof, its profile written to DIR.) The stream-end
// probe wraps `Duplex.prototype.end` in the child: a probe, not how the server runs.
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type InferTransport } from '@infergate/core';
import { type ModelDefinition, startTestServer } from '@infergate/testing';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag } from './lib.js';

const clock = () => Number(process.hrtime.bigint()) / 1e6;

interface Execution {
  key: number;
  rows: number;
  start: number;
  end: number;
  /** The first and second check phases after the end (node:http2 writes the answer, then its trailers, in them). */
  firstTurn: number;
  secondTurn: number;
  returned: number;
  streamEnded: number;
}

if (process.argv.includes('--serve')) {
  // When the answer's stream is ended (the last JavaScript before node:http2 writes it).
  let lastEnd = 0;
  const { Duplex } = await import('node:stream');
  const end = Duplex.prototype.end;
  Duplex.prototype.end = function (this: unknown, ...args: unknown[]) {
    lastEnd = clock();
    return (end as (...rest: unknown[]) => unknown).apply(this, args);
  } as typeof end;
  const server = await startTestServer({ simulatedGpu: { baseMs: 2, perRowMs: 0.05 } });
  const executions: Execution[] = [];
  const model: ModelDefinition = {
    name: 'timed_gpu',
    maxBatchSize: 64,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [-1] }],
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [-1] }],
    async execute(request) {
      const input = request.input('INPUT0');
      const values = input.data as Float32Array;
      let start = 0;
      await server.gpu.run(request.batchSize, undefined, () => {
        start = clock();
      });
      const end = clock();
      const execution = {
        key: values[0] as number,
        rows: request.batchSize,
        start,
        end,
        firstTurn: 0,
        secondTurn: 0,
        returned: 0,
        streamEnded: 0,
      };
      executions.push(execution);
      queueMicrotask(() => {
        execution.returned = clock();
      });
      setImmediate(() => {
        execution.firstTurn = clock();
        execution.streamEnded = lastEnd;
        setImmediate(() => {
          execution.secondTurn = clock();
        });
      });
      const doubled = new Float32Array(values.length);
      for (let i = 0; i < values.length; i++) doubled[i] = (values[i] as number) * 2;
      return [{ name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, data: doubled }];
    },
  };
  server.addModel(model);
  process.on('message', (message: string) => {
    if (message === 'take') {
      process.send?.({ executions: executions.splice(0), gpu: server.gpu.stats() });
      server.gpu.resetStats();
    } else if (message === 'stop') void server.stop().then(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ url: server.url });
} else {
  const seconds = Number(flag('seconds') ?? 2);
  const rounds = Number(flag('rounds') ?? 3);
  const concurrency = Number(flag('concurrency') ?? 64);
  const flush = (flag('flush') ?? 'adaptive') as 'adaptive' | 'fixed';
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], {
    execArgv: [
      ...process.execArgv,
      ...(flag('profile-server') === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${flag('profile-server')}`, '--cpu-prof-interval', '50']),
    ],
  });
  /** The child's next message. */
  const reply = <T>() => new Promise<T>((resolve) => child.once('message', (reply) => resolve(reply as T)));
  const { url } = await reply<{ url: string }>();
  const base = createTritonClient({ url, enableGpuIpc: false });
  const batches: { key: number; sent: number; answered: number }[] = [];
  const recorded: InferTransport = {
    infer: (request, options) => {
      const raw = request.inputs[0]?.raw as Uint8Array;
      const key = new DataView(raw.buffer, raw.byteOffset, 4).getFloat32(0, true);
      const batch = { key, sent: clock(), answered: 0 };
      batches.push(batch);
      return base.grpc.infer(request, options).then((response) => {
        batch.answered = clock();
        return response;
      });
    },
    stream: (request, options) => base.grpc.stream(request, options),
  };
  const batcher = createMicroBatcher(recorded, {
    flush,
    models: { timed_gpu: { maxBatchSize: 64 } },
  });
  const front = createTritonClient({ url, enableGpuIpc: false, transport: batcher });
  let seed = 0;
  const call = () =>
    front.infer('timed_gpu', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(seed++) },
    ]);
  await closedLoopWindow(call, concurrency, 1000);
  const parts = {
    request: [] as number[],
    execution: [] as number[],
    overrun: [] as number[],
    endToReturned: [] as number[],
    endToStreamEnd: [] as number[],
    endToTurn1: [] as number[],
    endToTurn2: [] as number[],
  };
  const more = { answer: [] as number[], client: [] as number[], cycle: [] as number[] };
  let overrunMean = 0;
  let executionsSeen = 0;
  for (let round = 0; round < rounds; round++) {
    child.send('take');
    await reply();
    batches.length = 0;
    await closedLoopWindow(call, concurrency, seconds * 1000);
    child.send('take');
    const { executions, gpu } = await reply<{
      executions: Execution[];
      gpu: { executions: number; wallMs: number; busyMs: number };
    }>();
    overrunMean += gpu.wallMs - gpu.busyMs;
    executionsSeen += gpu.executions;
    const byKey = new Map(executions.map((execution) => [execution.key, execution]));
    for (let index = 1; index < batches.length - 1; index++) {
      const batch = batches[index] as (typeof batches)[number];
      const next = batches[index + 1] as (typeof batches)[number];
      const execution = byKey.get(batch.key);
      const nextExecution = byKey.get(next.key);
      if (execution === undefined || batch.answered === 0) continue;
      parts.request.push(execution.start - batch.sent);
      parts.execution.push(execution.end - execution.start);
      parts.overrun.push(execution.end - execution.start - (2 + 0.05 * execution.rows));
      more.answer.push(batch.answered - execution.end);
      parts.endToReturned.push(execution.returned - execution.end);
      if (execution.streamEnded > execution.end)
        parts.endToStreamEnd.push(execution.streamEnded - execution.end);
      if (execution.firstTurn > 0) parts.endToTurn1.push(execution.firstTurn - execution.end);
      if (execution.secondTurn > 0) parts.endToTurn2.push(execution.secondTurn - execution.end);
      more.client.push(next.sent - batch.answered);
      if (nextExecution !== undefined) more.cycle.push(nextExecution.start - execution.start);
    }
  }
  const pct = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number).toFixed(3);
  };
  const mean = (values: number[]) => (values.reduce((a, b) => a + b, 0) / values.length).toFixed(3);
  console.log(
    `${flush} c${concurrency}, ${rounds} × ${seconds} s, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}; ${more.cycle.length} cycles; ms as p10 / p50 / p90 (mean)`,
  );
  for (const [name, values] of Object.entries({ ...parts, ...more })) {
    console.log(
      `  ${name.padEnd(10)} ${pct(values, 10)} / ${pct(values, 50)} / ${pct(values, 90)} (${mean(values)})`,
    );
  }
  console.log(`  the GPU's own mean overrun ${(overrunMean / executionsSeen).toFixed(3)} ms`);
  await front.close();
  await batcher.close();
  await base.close();
  child.send('stop');
}
