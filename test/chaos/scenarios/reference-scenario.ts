// One chaos scenario against two reference servers in child processes, run in a process of its
// own so the test can check that it exits by itself after close() and leaves no rejection
// unhandled. Prints `RESULT <json>` last.
//   tsx --conditions=@infergate/source reference-scenario.ts <kill|blackhole|reset-stream|slow|flapping>
import { performance } from 'node:perf_hooks';
import type { MicroBatcher } from '@infergate/batcher';
import { buildInferRequest, InfergateError, InferResult } from '@infergate/core';
import { createRouter } from '@infergate/router';
import {
  type AttemptLog,
  type CallOutcome,
  ranTwiceWithoutRetry,
  startChaosRig,
  tally,
} from '../chaos-rig.js';
import { type ServerProcess, startServerProcess } from '../server-process.js';

const scenario = process.argv[2] ?? '';
const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason)));

const servers = (await Promise.all([
  startServerProcess({ baseMs: 40, perRowMs: 0.1 }),
  startServerProcess({ baseMs: 40, perRowMs: 0.1 }),
])) as [ServerProcess, ServerProcess];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What every scenario reports: outcomes against deadlines, rows, double executions. */
function summary(outcomes: readonly CallOutcome[], deadlineMs: number, extra: Record<string, unknown> = {}) {
  return {
    calls: outcomes.length,
    tally: tally(outcomes),
    // Settled later than the deadline by more than 500 ms (the event loop of a busy machine).
    late: outcomes.filter((outcome) => outcome.settledAt - outcome.sentAt > deadlineMs + 500).length,
    untyped: outcomes.filter((outcome) => outcome.result.startsWith('untyped')).length,
    notOwnRow: outcomes.filter((outcome) => outcome.result === 'ok' && !outcome.ownRow).length,
    // The longest a call took (ms), so a run shows how far it stayed from deadline + 500 ms.
    slowestMs: Math.round(Math.max(0, ...outcomes.map((outcome) => outcome.settledAt - outcome.sentAt))),
    ...extra,
  };
}

/** Counts calls by the attempts they made (`a:DEADLINE_EXCEEDED,b:ok`). */
function paths(outcomes: readonly CallOutcome[], attempts: AttemptLog): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const path = (attempts.get(outcome.id) ?? []).join(',') || 'none';
    counts[path] = (counts[path] ?? 0) + 1;
  }
  return counts;
}

async function kill(): Promise<Record<string, unknown>> {
  const rig = await startChaosRig({ endpoints: [servers[0].url, servers[1].url] });
  const deadlineMs = 10_000;
  await rig.warm();
  const calls = Array.from({ length: 2_000 }, (_, id) => rig.call(id, { timeoutMs: deadlineMs }));
  // Kill a under load: once it has run a batch, with more in flight and queued behind it.
  while (servers[0].rows() < 64) await sleep(5);
  await servers[0].kill();
  const outcomes = await Promise.all(calls);
  await rig.close();
  return summary(outcomes, deadlineMs, {
    ranTwice: ranTwiceWithoutRetry([servers[0].ran, servers[1].ran], rig.attempts).length,
    ranOnA: servers[0].rows(),
    ranOnB: servers[1].rows(),
  });
}

async function blackhole(): Promise<Record<string, unknown>> {
  const rig = await startChaosRig({
    endpoints: [servers[0].url, servers[1].url],
    proxies: true,
    router: { attemptTimeoutMs: 500 },
  });
  const deadlineMs = 2_000;
  await rig.warm();
  const before = servers[0].rows();
  await rig.proxies[0]?.set({ kind: 'blackhole' });
  // The blackhole outlasts every deadline: the calls must leave it, not wait it out.
  const outcomes = await Promise.all(
    Array.from({ length: 200 }, (_, id) => rig.call(id, { timeoutMs: deadlineMs })),
  );
  const aBreaker = rig.router.breakerStates().a?.kind;
  // Without a fallback the caller gets a typed DEADLINE_EXCEEDED at its deadline.
  const only = createRouter({ targets: [{ name: 'a', transport: rig.batchers[0] as MicroBatcher }] });
  const request = buildInferRequest('chaos_gpu', [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) },
  ]);
  const alone = await only.infer(request, { timeoutMs: 400 }).then(
    () => 'ok',
    (error: unknown) => (error instanceof InfergateError ? error.code : 'untyped'),
  );
  await only.close();
  const ranOnA = servers[0].rows() - before;
  await rig.close();
  return summary(outcomes, deadlineMs, {
    ranTwice: ranTwiceWithoutRetry([servers[0].ran, servers[1].ran], rig.attempts).length,
    ranOnA,
    aBreaker,
    alone,
    // How the calls that did not end ok went (`a:DEADLINE_EXCEEDED,b:DEADLINE_EXCEEDED`: count), so
    // a failing run says where they waited.
    notOk: paths(
      outcomes.filter((outcome) => outcome.result !== 'ok'),
      rig.attempts,
    ),
  });
}

async function resetStream(): Promise<Record<string, unknown>> {
  const rig = await startChaosRig({ endpoints: [servers[0].url, servers[1].url], proxies: true });
  const count = 20;
  const request = buildInferRequest('repeat', [
    { name: 'IN', datatype: 'INT32', shape: [count], data: Int32Array.from({ length: count }, (_, i) => i) },
    { name: 'DELAY', datatype: 'UINT32', shape: [count], data: new Uint32Array(count).fill(50) },
  ]);
  const received: number[] = [];
  let error: InfergateError | undefined;
  const started = performance.now();
  try {
    for await (const response of rig.router.stream(request, { timeoutMs: 5_000 })) {
      received.push(Number((new InferResult(response).output('OUT').data as Int32Array)[0]));
      if (received.length === 5) await rig.proxies[0]?.set({ kind: 'reset' });
    }
  } catch (thrown) {
    error = thrown instanceof InfergateError ? thrown : undefined;
  }
  const settledMs = performance.now() - started;
  await rig.proxies[0]?.set({ kind: 'pass' });
  // A new stream after the reset works (on a or b).
  let after = 0;
  for await (const _ of rig.router.stream(request, { timeoutMs: 10_000 })) after += 1;
  await rig.close();
  return {
    received,
    errorCode: error?.code,
    afterFirstChunk: error?.details?.afterFirstChunk,
    partial: ((error?.details?.partial as { responses?: unknown[] } | undefined)?.responses ?? []).length,
    settledInTime: settledMs < 5_000 + 500,
    after,
  };
}

async function slow(): Promise<Record<string, unknown>> {
  // The attempt timeout sits between b's time for the whole burst (~0.2 s) and a's delay (3 s).
  const rig = await startChaosRig({
    endpoints: [servers[0].url, servers[1].url],
    proxies: true,
    router: { attemptTimeoutMs: 1_000 },
  });
  const deadlineMs = 4_000;
  await rig.warm();
  await rig.proxies[0]?.set({ kind: 'delay', ms: 1_500 });
  const outcomes = await Promise.all(
    Array.from({ length: 100 }, (_, id) => rig.call(id, { timeoutMs: deadlineMs })),
  );
  const aBreaker = rig.router.breakerStates().a?.kind;
  await rig.close();
  return summary(outcomes, deadlineMs, {
    ranTwice: ranTwiceWithoutRetry([servers[0].ran, servers[1].ran], rig.attempts).length,
    aBreaker,
  });
}

async function flapping(): Promise<Record<string, unknown>> {
  const rig = await startChaosRig({ endpoints: [servers[0].url, servers[1].url], proxies: true });
  await rig.warm();
  const deadlineMs = 2_000;
  let running = true;
  let up = true;
  const flapper = (async () => {
    while (running) {
      await sleep(200);
      up = !up;
      await rig.proxies[0]?.set(up ? { kind: 'pass' } : { kind: 'refuse' });
    }
  })();
  const outcomes: CallOutcome[] = [];
  let next = 0;
  const worker = async () => {
    while (running) outcomes.push(await rig.call(next++, { timeoutMs: deadlineMs }));
  };
  const workers = Array.from({ length: 32 }, worker);
  await sleep(3_000);
  running = false;
  await Promise.all([...workers, flapper]);
  await rig.close();
  return summary(outcomes, deadlineMs, {
    ranTwice: ranTwiceWithoutRetry([servers[0].ran, servers[1].ran], rig.attempts).length,
  });
}

const scenarios: Record<string, () => Promise<Record<string, unknown>>> = {
  kill,
  blackhole,
  'reset-stream': resetStream,
  slow,
  flapping,
};
const run = scenarios[scenario];
if (run === undefined) throw new Error(`unknown scenario '${scenario}'`);
try {
  const result = await run();
  process.stdout.write(`RESULT ${JSON.stringify({ ...result, unhandled })}\n`);
} finally {
  await Promise.all(servers.map((server) => server.stop()));
}
