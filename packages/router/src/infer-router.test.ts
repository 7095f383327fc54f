import {
  buildInferRequest,
  createTritonClient,
  ErrorCode,
  InfergateError,
  InferResult,
  Sequence,
  type TritonClient,
} from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { recordUnhandledRejections } from '../../../test/unit/unhandled-rejections.js';
import type { RouterConfig } from './config.js';
import { createRouter, type InferRouter } from './infer-router.js';
import type { AttemptEvent, BreakerStateEvent } from './router-events.js';

// Fast reconnects so a restarted server is seen within a test's time.
const channelOptions = { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 };
const servers: TestServer[] = [];
const clients: TritonClient[] = [];
const routers: InferRouter[] = [];

async function server(): Promise<TestServer> {
  const started = await startTestServer({ stopGraceMs: 100 });
  servers.push(started);
  return started;
}

function target(name: string, at: TestServer) {
  const client = createTritonClient({ url: at.url, enableGpuIpc: false, channelOptions });
  clients.push(client);
  return { name, transport: client.grpc };
}

function router(config: RouterConfig): InferRouter {
  const created = createRouter(config);
  routers.push(created);
  return created;
}

const identity = (value: number) =>
  buildInferRequest('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [value] }]);

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
}

const unhandled = recordUnhandledRejections();

afterEach(async () => {
  for (const created of routers.splice(0)) await created.close();
  for (const client of clients.splice(0)) await client.close();
  for (const started of servers.splice(0)) await started.stop();
  expect(unhandled).toEqual([]);
});

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('InferRouter with reference servers', () => {
  it('moves traffic to the fallback when the primary dies and back when it returns', async () => {
    const primary = await server();
    const fallback = await server();
    const routed = router({
      targets: [target('primary', primary), target('fallback', fallback)],
      breaker: { volumeThreshold: 3, openMs: 100, maxOpenMs: 300 },
      retry: { maxRetries: 0 },
      attemptTimeoutMs: 2_000,
    });
    const states: BreakerStateEvent[] = [];
    const attempts: AttemptEvent[] = [];
    routed.on('breaker-state', (event) => states.push(event));
    routed.on('attempt', (event) => attempts.push(event));
    let running = true;
    let successes = 0;
    let requests = 0;
    const failures: unknown[] = [];
    const worker = async (id: number) => {
      while (running) {
        requests += 1;
        try {
          const response = await routed.infer(identity(id));
          expect(new InferResult(response).output('OUTPUT0').data[0]).toBe(id);
          successes += 1;
        } catch (error) {
          failures.push(error);
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, id) => worker(id));
    await until(() => successes > 100, 5_000);
    primary.kill();
    await until(() => routed.breakerStates().primary?.kind !== 'closed', 5_000);
    const afterKill = successes;
    await until(() => successes > afterKill + 100, 5_000);
    await primary.restart();
    await until(() => routed.breakerStates().primary?.kind === 'closed', 10_000);
    const servedBefore = primary.executions('identity');
    await until(() => primary.executions('identity') > servedBefore + 50, 5_000);
    running = false;
    await Promise.all(workers); // every request settles

    for (const failure of failures) expect(failure).toBeInstanceOf(InfergateError);
    expect(states.some((event) => event.target === 'primary' && event.to.kind === 'open')).toBe(true);
    expect(states.at(-1)).toMatchObject({ target: 'primary', to: { kind: 'closed' } });
    expect(fallback.executions('identity')).toBeGreaterThan(100);
    // Every success came from one execution; a request ran at most twice (primary, then fallback)
    // and only when the primary failed after the request may have reached it.
    const executions = primary.executions('identity') + fallback.executions('identity');
    const reExecutable = attempts.filter(
      (event) => event.target === 'primary' && event.outcome === 'failure',
    ).length;
    expect(successes).toBe(attempts.filter((event) => event.outcome === 'success').length);
    expect(executions).toBeGreaterThanOrEqual(successes);
    expect(executions).toBeLessThanOrEqual(successes + reExecutable);
    expect(requests).toBe(successes + failures.length);
  }, 30_000);

  it('keeps a sequence on the endpoint chosen at START and never moves it mid-way', async () => {
    const a = await server();
    const b = await server();
    const routed = router({
      targets: [target('a', a), target('b', b)],
      route: { group: [{ route: 'a' }, { route: 'b' }] },
      random: seeded(7),
    });
    const input = (value: number) => [
      { name: 'INPUT', datatype: 'INT32' as const, shape: [1, 1], data: [value] },
    ];
    const sequences = Array.from(
      { length: 12 },
      (_, i) => new Sequence('accumulate', routed, async () => {}, { id: i + 1 }),
    );
    for (const step of [1, 2, 3]) {
      await Promise.all(sequences.map((sequence) => sequence.infer(input(step))));
    }
    const sums = await Promise.all(
      sequences.map(async (sequence) => (await sequence.end(input(4))).output('OUTPUT').data[0]),
    );
    expect(sums).toEqual(sequences.map(() => 10)); // 1+2+3+4: every step found its state
    expect(a.stats('accumulate').requests).toBeGreaterThan(0);
    expect(b.stats('accumulate').requests).toBeGreaterThan(0);
    expect(a.stats('accumulate').requests + b.stats('accumulate').requests).toBe(48);
    expect(routed.pinnedSequences).toBe(0);

    // Kill the endpoint a live sequence is pinned to: the next request fails typed, never moves.
    const live = new Sequence('accumulate', routed, async () => {}, { id: 99 });
    await live.infer(input(1));
    const [pinned, other] = a.activeSequences('accumulate') === 1 ? [a, b] : [b, a];
    const otherRequests = other.stats('accumulate').requests;
    pinned.kill();
    const error = await live.infer(input(2)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: ErrorCode.Aborted,
      retryable: false,
      details: { sequenceError: ErrorCode.Unavailable },
    });
    expect(other.stats('accumulate').requests).toBe(otherRequests);
    expect(routed.pinnedSequences).toBe(0);
  });

  it('does not open the breaker on QUEUE_FULL: the target is cooled and traffic falls back', async () => {
    const primary = await server();
    const fallback = await server();
    primary.faults.set('identity', { code: 'UNAVAILABLE', message: 'Exceeds maximum queue size' });
    const routed = router({
      targets: [target('primary', primary), target('fallback', fallback)],
      breaker: { volumeThreshold: 2 },
      firstCooldownMs: 60_000,
      cooldownMs: 60_000,
    });
    for (let i = 0; i < 20; i++) await routed.infer(identity(i));
    expect(primary.stats('identity').requests).toBe(1); // cooled after the first
    expect(fallback.executions('identity')).toBe(20);
    expect(routed.breakerStates().primary?.kind).toBe('closed');
  });

  it('never trips on backpressure from the fail model, even when every call is one', async () => {
    const only = await server();
    const routed = router({
      targets: [target('only', only)],
      breaker: { volumeThreshold: 2 },
      cooldownMs: 0,
      retry: { maxRetries: 0 },
    });
    const request = buildInferRequest('fail', [], { parameters: { fail_code: 8 } }); // RESOURCE_EXHAUSTED
    for (let i = 0; i < 25; i++)
      await expect(routed.infer(request)).rejects.toMatchObject({ code: ErrorCode.ResourceExhausted });
    expect(only.executions('fail')).toBe(25); // each request ran once: no retry of a busy answer
    expect(routed.breakerStates().only?.kind).toBe('closed');
  });

  describe('streams', () => {
    const repeat = (values: number[], parameters: Record<string, number> = {}) =>
      buildInferRequest('repeat', [{ name: 'IN', datatype: 'INT32', shape: [values.length], data: values }], {
        parameters,
      });

    it('fall back before the first response', async () => {
      const primary = await server();
      const fallback = await server();
      primary.kill();
      const routed = router({ targets: [target('primary', primary), target('fallback', fallback)] });
      const values: number[] = [];
      for await (const response of routed.stream(repeat([1, 2, 3]), {})) {
        values.push(new InferResult(response).output('OUT').data[0] as number);
      }
      expect(values).toEqual([1, 2, 3]);
    });

    it('end with a typed error carrying the responses already yielded', async () => {
      const primary = await server();
      const fallback = await server();
      const routed = router({ targets: [target('primary', primary), target('fallback', fallback)] });
      let seen = 0;
      const error = await (async () => {
        for await (const _ of routed.stream(repeat([1, 2, 3, 4], { error_after: 2 }), {})) seen += 1;
      })().catch((caught: unknown) => caught);
      expect(seen).toBe(2);
      expect(error).toBeInstanceOf(InfergateError);
      expect(error).toMatchObject({
        retryable: false,
        details: { target: 'primary', afterFirstChunk: true },
      });
      expect((error as InfergateError).details?.partial).toMatchObject({ responses: { length: 2 } });
      expect(fallback.stats('repeat').requests).toBe(0);
    });
  });
});
