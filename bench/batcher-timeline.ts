// The c64 cycle on a timeline: where the time between two executions of `simulated_gpu` goes. The
// reference server runs in a child process (this script with --serve) serving `timed_gpu`: the
// package's `simulated_gpu` model on a SimulatedGpu of its own, wrapped to record, per execution,
// when it took the slot and when it returned; with the execution's nominal end (slot taken + its
// cost) it also records when the answer's stream was ended (the last JavaScript before node:http2
// writes it) and the first two check phases after the return (node:http2 writes the answer's
// HEADERS and DATA in one, its trailers in the next). This process records, per batch, when the
// batcher handed it to the transport and when the decoded answer came back. Both read the
// monotonic clock the processes share. Matched by the batch's first input value, each cycle splits
// into: request (batch sent → the model has the slot; split at the server's 'stream' event, probed
// by wrapping `EventEmitter.prototype.emit` in the child, into wire and serverIn), toReturn (slot → the model returned: the
// cost, the GPU's overrun and whatever the model does after its end), the server's answer path from
// the nominal end (endToReturned, endToStreamEnd, endToTurn1, endToTurn2), answer (nominal end →
// the answer decoded here) and client (answer → next batch sent: splitting, the callers answered,
// their new calls, the batch built). ms as p10 / p50 / p90 (mean).
//   node scripts/bootstrap.mjs --dist bench/batcher-timeline.ts [--seconds 2] [--rounds 3]
//       [--concurrency 64] [--flush adaptive|fixed] [--profile-server DIR] [--compare DIR]
//       [--transport http2|lean]
// Socket probes on every transport split the request (in.clientWrite: batch sent → the client's
// flush returned; in.toServerData: → the server's socket emitted it; in.serverToSlot: → the slot)
// and the answer (out.toReturned, out.toWritten: → the server's flush began, out.writev,
// out.toClientData: → the client's socket emitted it, out.decode: → the decoded answer), and the
// client's part (client.handOut: → the first caller resumed, client.callers: → the last,
// client.nextBatch: → the next batch sent).
// --compare DIR: a second model, `timed_gpu_compare`, built by another build of @infergate/testing
// (its dist/ directory copied inside packages/testing/ so that it resolves its dependencies, e.g.
// main's as packages/testing/.dist-main; delete it after), its own slot, the arms alternating round
// by round against the one server: side by side, the simulated GPU and its model.
// --profile-server DIR: the child runs under --cpu-prof, its profile written to DIR. The stream-end
// probe wraps `Duplex.prototype.end` in the child: a probe, not how the server runs.
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type InferTransport } from '@infergate/core';
import {
  type ModelDefinition,
  SimulatedGpu,
  simulatedGpuModel,
  startTestServer,
  type TestServerOptions,
} from '@infergate/testing';
import { closedLoopWindow } from '../packages/cli/src/perf/load-window.js';
import { flag } from './lib.js';

const clock = () => Number(process.hrtime.bigint()) / 1e6;
/** The reference server's hook for answers held until their execution ends (decision 0023). */
const ANSWER_EARLY = Symbol.for('infergate.testing.answerEarly');

/**
 * Socket-level probes, on either transport (node:http2 or the lean ones): when a socket last
 * emitted 'data' (its bytes read into JavaScript), and when a socket's `uncork` (both lean ends cork
 * a turn's writes and flush them in one `writev` at the end of the microtask queue) was last
 * entered and returned. At c64 one batch is in flight, so "last" is the batch's.
 */
const probes = { data: 0, uncorkIn: 0, uncorkOut: 0 };
{
  const { Socket } = await import('node:net');
  const { EventEmitter } = await import('node:events');
  const emit = EventEmitter.prototype.emit;
  EventEmitter.prototype.emit = function (this: unknown, name: string | symbol, ...args: unknown[]) {
    if (name === 'data' && this instanceof Socket) probes.data = clock();
    return emit.call(this, name, ...args);
  } as typeof emit;
  const uncork = Socket.prototype.uncork;
  Socket.prototype.uncork = function (this: InstanceType<typeof Socket>) {
    const corked = this.writableCorked;
    const entered = clock();
    uncork.call(this);
    // Only the uncork that flushes (a second one on an uncorked socket is a no-op).
    if (corked === 1) {
      probes.uncorkIn = entered;
      probes.uncorkOut = clock();
    }
  };
}

interface Execution {
  key: number;
  rows: number;
  start: number;
  /** The nominal end: start + the cost of its rows. */
  end: number;
  /** The first and second check phases after the return (node:http2 writes the answer, then its trailers, in them). */
  firstTurn: number;
  secondTurn: number;
  returned: number;
  streamEnded: number;
  /** When the server's JavaScript saw the request's stream (its 'stream' event). */
  received: number;
  /** When the request's last bytes were read from the server's socket (any transport). */
  socketData: number;
  /** When the answer's flush began (`uncork` entered: the answer encoded and queued) and returned (`writev` done). */
  written: number;
  writevReturned: number;
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
  // When the server's JavaScript last saw a request's stream (at c64 one batch is in flight).
  let lastStream = 0;
  const { EventEmitter } = await import('node:events');
  const emit = EventEmitter.prototype.emit;
  EventEmitter.prototype.emit = function (this: unknown, name: string | symbol, ...args: unknown[]) {
    if (name === 'stream') lastStream = clock();
    return emit.call(this, name, ...args);
  } as typeof emit;
  // --transport http2|lean|grpc-js: what serves the gRPC port (unset: the package's default). The
  // 'stream' and stream-end probes see node:http2's streams only; on `lean` those columns stay empty.
  const transport = flag('transport') as TestServerOptions['transport'];
  const server = await startTestServer({
    simulatedGpu: { baseMs: 2, perRowMs: 0.05 },
    ...(transport === undefined ? {} : { transport }),
  });
  const executions: Execution[] = [];
  // `timed_gpu`: this build's `simulated_gpu` model on a SimulatedGpu of its own; with --compare
  // DIR, `timed_gpu_compare`: another build's (its @infergate/testing dist/ directory), likewise.
  // Each is wrapped to record when it took the slot and when it returned.
  const compare = flag('compare');
  const gpus: [string, SimulatedGpu, typeof simulatedGpuModel][] = [
    ['timed_gpu', new SimulatedGpu({ baseMs: 2, perRowMs: 0.05 }), simulatedGpuModel],
  ];
  if (compare !== undefined) {
    const other = (await import(pathToFileURL(resolve(compare, 'index.js')).href)) as {
      SimulatedGpu: typeof SimulatedGpu;
      simulatedGpuModel: typeof simulatedGpuModel;
    };
    gpus.push([
      'timed_gpu_compare',
      new other.SimulatedGpu({ baseMs: 2, perRowMs: 0.05 }),
      other.simulatedGpuModel,
    ]);
  }
  const timedModel = (name: string, gpu: SimulatedGpu, make: typeof simulatedGpuModel): ModelDefinition => {
    const inner = make(gpu, 64);
    const execute = inner.execute as NonNullable<typeof inner.execute>;
    return {
      ...inner,
      name,
      async execute(request, context) {
        const raw = request.input('INPUT0').raw;
        const key = new DataView(raw.buffer, raw.byteOffset, 4).getFloat32(0, true);
        let start = 0;
        let received = 0;
        let socketData = 0;
        // The model's end: when it returned, or (an answer held by the transport, decision 0023)
        // when the execution it handed over ended; stamped before the answer's write runs.
        const ended = () => {
          const returned = clock();
          // The execution's nominal end: the slot's cost after it was taken.
          const end = start + gpu.costMs(request.batchSize);
          const execution: Execution = {
            key,
            rows: request.batchSize,
            start,
            end,
            firstTurn: 0,
            secondTurn: 0,
            returned,
            streamEnded: 0,
            received,
            socketData,
            written: 0,
            writevReturned: 0,
          };
          executions.push(execution);
          setImmediate(() => {
            execution.firstTurn = clock();
            // The answer leaves in the turn of the end (lean) or the next check phase (node:http2).
            if (probes.uncorkIn >= returned) {
              execution.written = probes.uncorkIn;
              execution.writevReturned = probes.uncorkOut;
            }
            execution.streamEnded = lastEnd;
            setImmediate(() => {
              execution.secondTurn = clock();
            });
          });
        };
        // The pipeline's hook for answers held until the execution's end, passed on (stamped).
        const hook = (context as unknown as Record<symbol, unknown>)[ANSWER_EARLY];
        let held = false;
        const inner: Record<string | symbol, unknown> = {
          get signal() {
            return context.signal;
          },
          get aborted() {
            return (context as { aborted?: boolean }).aborted;
          },
          computeStarted(startedAt?: bigint) {
            // A queued execution's start runs after the slot passed to it, and is told when.
            start = startedAt === undefined ? clock() : Number(startedAt) / 1e6;
            received = lastStream;
            socketData = probes.data;
            context.computeStarted(startedAt);
          },
        };
        if (typeof hook === 'function') {
          inner[ANSWER_EARLY] = (until: Promise<void>) => {
            held = true;
            until.then(ended, () => {});
            (hook as (until: Promise<void>) => void)(until);
          };
        }
        const outputs = await execute(request, inner as unknown as typeof context);
        if (!held) ended();
        return outputs;
      },
    };
  };
  for (const [name, gpu, make] of gpus) server.addModel(timedModel(name, gpu, make));
  process.on('message', (message: string) => {
    if (message.startsWith('take ')) {
      const gpu = (gpus.find(([name]) => name === message.slice(5)) as (typeof gpus)[number])[1];
      process.send?.({ executions: executions.splice(0), gpu: gpu.stats() });
      gpu.resetStats();
    } else if (message === 'stop') void server.stop().then(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ url: server.url });
} else {
  const seconds = Number(flag('seconds') ?? 2);
  const rounds = Number(flag('rounds') ?? 3);
  const concurrency = Number(flag('concurrency') ?? 64);
  const flush = (flag('flush') ?? 'adaptive') as 'adaptive' | 'fixed';
  const child = fork(fileURLToPath(import.meta.url), ['--serve', ...process.argv.slice(2)], {
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
  const arms = ['timed_gpu', ...(flag('compare') === undefined ? [] : ['timed_gpu_compare'])].map((model) => {
    const base = createTritonClient({ url, enableGpuIpc: false });
    const batches: {
      key: number;
      sent: number;
      answered: number;
      /** The request's flush returned (client `uncork`), and the answer's bytes read (socket 'data'). */
      requestWritten: number;
      answerData: number;
      /** When the first and the last of its callers' calls resolved (the batcher's hand-out). */
      firstCaller: number;
      lastCaller: number;
    }[] = [];
    const arm = { current: undefined as (typeof batches)[number] | undefined };
    const recorded: InferTransport = {
      infer: (request, options) => {
        const raw = request.inputs[0]?.raw as Uint8Array;
        const key = new DataView(raw.buffer, raw.byteOffset, 4).getFloat32(0, true);
        const batch = {
          key,
          sent: clock(),
          answered: 0,
          requestWritten: 0,
          answerData: 0,
          firstCaller: 0,
          lastCaller: 0,
        };
        batches.push(batch);
        return base.grpc.infer(request, options).then((response) => {
          batch.answered = clock();
          batch.requestWritten = probes.uncorkOut;
          batch.answerData = probes.data;
          arm.current = batch;
          return response;
        });
      },
      stream: (request, options) => base.grpc.stream(request, options),
    };
    const batcher = createMicroBatcher(recorded, { flush, models: { [model]: { maxBatchSize: 64 } } });
    const front = createTritonClient({ url, enableGpuIpc: false, transport: batcher });
    const parts: Record<string, number[]> = {
      request: [],
      wire: [],
      serverIn: [],
      'in.clientWrite': [],
      'in.toServerData': [],
      'in.serverToSlot': [],
      toReturn: [],
      endToReturned: [],
      endToStreamEnd: [],
      endToTurn1: [],
      endToTurn2: [],
      answer: [],
      'out.toReturned': [],
      'out.toWritten': [],
      'out.writev': [],
      'out.toClientData': [],
      'out.decode': [],
      client: [],
      'client.handOut': [],
      'client.callers': [],
      'client.nextBatch': [],
      cycle: [],
    };
    return {
      model,
      base,
      batcher,
      front,
      batches,
      parts,
      handing: arm,
      overrunMs: 0,
      executions: 0,
      items: 0,
      ms: 0,
    };
  });
  let seed = 0;
  // Each caller's answer stamps the batch it came from (first and last caller resumed).
  const call = (arm: (typeof arms)[number]) => () =>
    arm.front
      .infer(arm.model, [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(seed++) },
      ])
      .then((response) => {
        const batch = arm.handing.current;
        if (batch !== undefined) {
          const now = clock();
          if (batch.firstCaller === 0) batch.firstCaller = now;
          batch.lastCaller = now;
        }
        return response;
      });
  for (const arm of arms) await closedLoopWindow(call(arm), concurrency, 1000);
  const push = (arm: (typeof arms)[number], name: string, value: number) => arm.parts[name]?.push(value);
  for (let round = 0; round < rounds; round++) {
    // The arms' order alternates round by round.
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      child.send(`take ${arm.model}`);
      await reply();
      arm.batches.length = 0;
      const window = await closedLoopWindow(call(arm), concurrency, seconds * 1000);
      arm.items += window.completed;
      arm.ms += window.elapsedMs;
      child.send(`take ${arm.model}`);
      const { executions, gpu } = await reply<{
        executions: Execution[];
        gpu: { executions: number; wallMs: number; busyMs: number };
      }>();
      arm.overrunMs += gpu.wallMs - gpu.busyMs;
      arm.executions += gpu.executions;
      const byKey = new Map(executions.map((execution) => [execution.key, execution]));
      const { batches } = arm;
      for (let index = 1; index < batches.length - 1; index++) {
        const batch = batches[index] as (typeof batches)[number];
        const next = batches[index + 1] as (typeof batches)[number];
        const execution = byKey.get(batch.key);
        const nextExecution = byKey.get(next.key);
        if (execution === undefined || batch.answered === 0) continue;
        push(arm, 'request', execution.start - batch.sent);
        if (execution.received > batch.sent) {
          push(arm, 'wire', execution.received - batch.sent);
          push(arm, 'serverIn', execution.start - execution.received);
        }
        if (batch.requestWritten >= batch.sent && execution.socketData >= batch.requestWritten) {
          push(arm, 'in.clientWrite', batch.requestWritten - batch.sent);
          push(arm, 'in.toServerData', execution.socketData - batch.requestWritten);
          push(arm, 'in.serverToSlot', execution.start - execution.socketData);
        }
        if (execution.written > 0 && batch.answerData >= execution.writevReturned) {
          push(arm, 'out.toReturned', execution.returned - execution.end);
          push(arm, 'out.toWritten', execution.written - execution.returned);
          push(arm, 'out.writev', execution.writevReturned - execution.written);
          push(arm, 'out.toClientData', batch.answerData - execution.writevReturned);
          push(arm, 'out.decode', batch.answered - batch.answerData);
        }
        push(arm, 'toReturn', execution.returned - execution.start);
        push(arm, 'endToReturned', execution.returned - execution.end);
        if (execution.streamEnded > execution.end)
          push(arm, 'endToStreamEnd', execution.streamEnded - execution.end);
        if (execution.firstTurn > 0) push(arm, 'endToTurn1', execution.firstTurn - execution.end);
        if (execution.secondTurn > 0) push(arm, 'endToTurn2', execution.secondTurn - execution.end);
        push(arm, 'answer', batch.answered - execution.end);
        push(arm, 'client', next.sent - batch.answered);
        if (batch.firstCaller >= batch.answered && next.sent >= batch.lastCaller) {
          push(arm, 'client.handOut', batch.firstCaller - batch.answered);
          push(arm, 'client.callers', batch.lastCaller - batch.firstCaller);
          push(arm, 'client.nextBatch', next.sent - batch.lastCaller);
        }
        if (nextExecution !== undefined) push(arm, 'cycle', nextExecution.start - execution.start);
      }
    }
  }
  const pct = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN).toFixed(
      3,
    );
  };
  const mean = (values: number[]) => (values.reduce((a, b) => a + b, 0) / values.length).toFixed(3);
  console.log(
    `${flush} c${concurrency}, ${rounds} × ${seconds} s per arm, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}; ms as p10 / p50 / p90 (mean)`,
  );
  for (const arm of arms) {
    console.log(
      `${arm.model}${arm.model === 'timed_gpu' ? ' (this build)' : ` (${flag('compare')})`}: ` +
        `${((arm.items / arm.ms) * 1000).toFixed(0)} items/s, ${arm.parts.cycle?.length} cycles`,
    );
    for (const [name, values] of Object.entries(arm.parts)) {
      if (values.length === 0) continue;
      console.log(
        `  ${name.padEnd(14)} ${pct(values, 10)} / ${pct(values, 50)} / ${pct(values, 90)} (${mean(values)})`,
      );
    }
    console.log(`  the GPU's own mean overrun ${(arm.overrunMs / arm.executions).toFixed(3)} ms`);
  }
  for (const arm of arms) {
    await arm.front.close();
    await arm.batcher.close();
    await arm.base.close();
  }
  child.send('stop');
}
