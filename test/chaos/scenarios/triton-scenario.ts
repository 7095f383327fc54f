// A chaos scenario against two real Tritons (started by the test), in a process of its own so the
// test can check that it exits by itself after close(). Prints `RESULT <json>` last.
//   tsx --conditions=@infergate/source triton-scenario.ts <kill|blackhole> <a host:port> <b host:port> <a pgid>
import { createTritonClient } from '@infergate/core';
import { type CallOutcome, startChaosRig, tally } from '../chaos-rig.js';

const [scenario = '', aUrl = '', bUrl = '', aGroup = ''] = process.argv.slice(2);
const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason)));
const MODEL = 'identity_fp32_batched';
/** Rows rig.warm() runs on each endpoint. */
const WARM_ROWS = 1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rows Triton executed for MODEL (ModelStatistics inference_count), or -1 when it cannot say. */
async function executed(url: string): Promise<number> {
  const client = createTritonClient({ url, enableGpuIpc: false });
  try {
    const stats = await client.modelStatistics(MODEL, { timeoutMs: 5_000 });
    return stats.reduce((sum, entry) => sum + Number(entry.inferenceCount), 0);
  } catch {
    return -1;
  } finally {
    await client.close();
  }
}

/**
 * Rows Triton executed for MODEL once they reach `rows`, polled (50 ms apart, up to 10 s): Triton
 * counts an execution when it releases the request, which can be after the client has its answer,
 * so one read just after the last answer may miss the last rows. More than `rows` (a row run twice)
 * shows as soon as it is counted; fewer after 10 s is returned as it is.
 */
async function executedAtLeast(url: string, rows: number): Promise<number> {
  const end = Date.now() + 10_000;
  let count = await executed(url);
  while (count < rows && Date.now() < end) {
    await sleep(50);
    count = await executed(url);
  }
  return count;
}

function summary(outcomes: readonly CallOutcome[], deadlineMs: number) {
  return {
    calls: outcomes.length,
    tally: tally(outcomes),
    late: outcomes.filter((outcome) => outcome.settledAt - outcome.sentAt > deadlineMs + 500).length,
    untyped: outcomes.filter((outcome) => outcome.result.startsWith('untyped')).length,
    notOwnRow: outcomes.filter((outcome) => outcome.result === 'ok' && !outcome.ownRow).length,
  };
}

async function kill(): Promise<Record<string, unknown>> {
  const rig = await startChaosRig({ endpoints: [aUrl, bUrl], model: MODEL, factor: 1 });
  const deadlineMs = 30_000;
  // Read before the warm-up: Triton counts an execution when it releases the request, which can be
  // after the client has its answer, so a read just after warm() may miss the warm-up row.
  const bBefore = (await executed(bUrl)) + WARM_ROWS;
  await rig.warm();
  const calls = Array.from({ length: 1_000 }, (_, id) => rig.call(id, { timeoutMs: deadlineMs }));
  // Kill a under load: once it has answered some calls, with more in flight and queued.
  const answeredByA = () => [...rig.attempts.values()].filter((tried) => tried.includes('a:ok')).length;
  while (answeredByA() < 50) await sleep(5);
  process.kill(-Number(aGroup), 'SIGKILL');
  const outcomes = await Promise.all(calls);
  // Each call b answered ran there once: b's executed rows = the calls it answered.
  const answeredByB = [...rig.attempts.values()].filter((tried) => tried.includes('b:ok')).length;
  const bRan = (await executedAtLeast(bUrl, bBefore + answeredByB)) - bBefore;
  await rig.close();
  return { ...summary(outcomes, deadlineMs), answeredByB, bRan };
}

async function blackhole(): Promise<Record<string, unknown>> {
  const rig = await startChaosRig({
    endpoints: [aUrl, bUrl],
    model: MODEL,
    factor: 1,
    proxies: true,
    router: { attemptTimeoutMs: 1_000 },
  });
  const deadlineMs = 5_000;
  const aBefore = (await executed(aUrl)) + WARM_ROWS; // read before warm(): see kill()
  await rig.warm();
  await rig.proxies[0]?.set({ kind: 'blackhole' });
  const outcomes = await Promise.all(
    Array.from({ length: 100 }, (_, id) => rig.call(id, { timeoutMs: deadlineMs })),
  );
  const aBreaker = rig.router.breakerStates().a?.kind;
  await rig.close();
  // a ran the warm-up row before the blackhole: wait until it is counted, then nothing more.
  return {
    ...summary(outcomes, deadlineMs),
    aRan: (await executedAtLeast(aUrl, aBefore)) - aBefore,
    aBreaker,
  };
}

const scenarios: Record<string, () => Promise<Record<string, unknown>>> = { kill, blackhole };
const run = scenarios[scenario];
if (run === undefined) throw new Error(`unknown scenario '${scenario}'`);
const result = await run();
process.stdout.write(`RESULT ${JSON.stringify({ ...result, unhandled })}\n`);
