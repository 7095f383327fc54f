import {
  buildInferRequest,
  ErrorCode,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
} from '@infergate/core';
import type { ChatModel, ChatRequest } from '@infergate/llm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChatRouter } from './chat-router.js';
import type { RouterOptions } from './config.js';
import { createInferRouter, type InferRouter } from './infer-router.js';
import { LoadStats } from './load-stats.js';

const requestFor = (model: string): InferRequest =>
  buildInferRequest(model, [{ name: 'IN', datatype: 'FP32', shape: [1], data: new Float32Array([1]) }]);
const request = requestFor('m');
const ok = (id: string, model = 'm'): InferResponse => ({
  model,
  modelVersion: '1',
  id,
  outputs: [],
  parameters: {},
});

/** A seeded random source (an LCG), so a test's weighted draws are the same every run. */
function seeded(seed = 1): () => number {
  let state = seed;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) % 4_294_967_296;
    return state / 4_294_967_296;
  };
}

interface HeldTarget extends InferTransport {
  readonly calls: string[];
  /** Answers every call held so far. */
  release(): void;
}

/** An in-memory target that holds every call until `release()`, or answers after `delayMs` (timers). */
function target(name: string, delayMs?: number): HeldTarget {
  const calls: string[] = [];
  let held: (() => void)[] = [];
  return {
    calls,
    release() {
      const now = held;
      held = [];
      for (const resolve of now) resolve();
    },
    async infer(request) {
      calls.push(request.model);
      await new Promise<void>((resolve) => {
        if (delayMs === undefined) held.push(resolve);
        else setTimeout(resolve, delayMs);
      });
      return ok(name, request.model);
    },
    // biome-ignore lint/correctness/useYield: these targets never stream
    async *stream() {
      throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
    },
  };
}

const routers: InferRouter[] = [];
function router(options: RouterOptions): InferRouter {
  const created = createInferRouter({ random: seeded(), ...options });
  routers.push(created);
  return created;
}

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(routers.splice(0).map((created) => created.close()));
});

describe('balancing strategies', () => {
  it('least-in-flight sends each call to the target with the fewest calls in flight', async () => {
    const a = target('a');
    const b = target('b');
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      balance: { strategy: 'least-in-flight' },
    });
    let settled = 0;
    const send = () =>
      routed.infer(request).then((answer) => {
        settled += 1;
        return answer;
      });
    const calls = Array.from({ length: 10 }, send);
    await vi.waitFor(() => expect(a.calls.length + b.calls.length).toBe(10));
    expect(a.calls.length).toBe(5);
    expect(b.calls.length).toBe(5);
    a.release();
    await vi.waitFor(() => expect(settled).toBe(5));
    // a has nothing in flight now, b still has five: the next five all go to a.
    const more = Array.from({ length: 5 }, send);
    await vi.waitFor(() => expect(a.calls.length + b.calls.length).toBe(15));
    expect(a.calls.length).toBe(10);
    a.release();
    b.release();
    await Promise.all([...calls, ...more]);
  });

  it('keeps in-flight counts per model: a busy model on a target does not push another model away', async () => {
    const a = target('a');
    const b = target('b');
    // A constant random source: equal weights tie, and a tie keeps the listed order (a first).
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      balance: { strategy: 'least-in-flight' },
      random: () => 0.5,
    });
    const busy = Array.from({ length: 3 }, () => routed.infer(requestFor('x')));
    await vi.waitFor(() => expect(a.calls).toEqual(['x', 'x']));
    expect(b.calls).toEqual(['x']);
    // Model y has nothing in flight anywhere: the tie goes to a, although a is busier with x.
    const other = routed.infer(requestFor('y'));
    await vi.waitFor(() => expect(a.calls).toEqual(['x', 'x', 'y']));
    a.release();
    b.release();
    await Promise.all([...busy, other]);
  });

  it('p2c-ewma moves calls away from a target that answers slower', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const slow = target('slow', 30);
    const fast = target('fast', 10);
    const routed = router({
      targets: [
        { name: 'slow', transport: slow },
        { name: 'fast', transport: fast },
      ],
      balance: { strategy: 'p2c-ewma' },
    });
    for (let call = 0; call < 40; call++) {
      const answer = routed.infer(request);
      await vi.advanceTimersByTimeAsync(30);
      await answer;
    }
    // Each target is measured once at most before the faster one wins every later draw.
    expect(slow.calls.length).toBeLessThanOrEqual(2);
    expect(fast.calls.length).toBeGreaterThanOrEqual(38);
  });

  it('p2c-ewma spreads calls over targets that are all slow, and every call succeeds', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const a = target('a', 50);
    const b = target('b', 50);
    const routed = router({
      targets: [
        { name: 'a', transport: a },
        { name: 'b', transport: b },
      ],
      balance: { strategy: 'p2c-ewma' },
    });
    const calls = Array.from({ length: 20 }, () => routed.infer(request));
    await vi.advanceTimersByTimeAsync(60);
    const answers = await Promise.all(calls);
    expect(answers).toHaveLength(20);
    // Equal latencies: the in-flight factor alternates the two.
    expect(a.calls.length).toBe(10);
    expect(b.calls.length).toBe(10);
  });

  it('lowest-cost sends calls to the cheapest target and falls back to the next cheapest', async () => {
    const cheap = target('cheap', 0);
    const dear = target('dear', 0);
    const unknown = target('unknown', 0);
    let cheapFails = false;
    const flaky: InferTransport = {
      infer: async (call, options) => {
        if (cheapFails) throw new InfergateError(ErrorCode.Unavailable, 'connection refused');
        return cheap.infer(call, options);
      },
      stream: (call, options) => cheap.stream(call, options),
    };
    const routed = router({
      targets: [
        { name: 'unknown', transport: unknown },
        { name: 'dear', transport: dear, cost: 0.002 },
        { name: 'cheap', transport: flaky, cost: 0.0005 },
      ],
      balance: { strategy: 'lowest-cost' },
      retry: { maxRetries: 0 },
    });
    for (let call = 0; call < 5; call++) expect((await routed.infer(request)).id).toBe('cheap');
    cheapFails = true;
    expect((await routed.infer(request)).id).toBe('dear');
    expect(unknown.calls).toEqual([]);
  });

  it('lowest-cost prices a chat call from the price list, per target model', async () => {
    const seen: string[] = [];
    const model: ChatModel = {
      provider: 'openai',
      async chat(chat: ChatRequest) {
        seen.push(chat.model);
        return {
          id: '1',
          model: chat.model,
          text: 'hi',
          finishReason: 'stop',
          rawFinishReason: 'stop',
          provider: 'openai',
          usage: {
            inputTokens: 1,
            outputTokens: 1,
            cacheReadTokens: undefined,
            cacheWriteTokens: undefined,
            reasoningTokens: undefined,
            raw: {},
          },
        };
      },
      // biome-ignore lint/correctness/useYield: never streams
      async *chatStream() {
        throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
      },
    };
    // USD per million tokens, as @infergate/cost's PriceCatalog answers.
    const table: Record<string, { input: number; output: number }> = {
      'gpt-4o': { input: 2.5, output: 10 },
      'gpt-4o-mini': { input: 0.15, output: 0.6 },
    };
    const chat = createChatRouter({
      targets: [
        { name: 'big', model, modelName: 'gpt-4o' },
        { name: 'small', model, modelName: 'gpt-4o-mini' },
      ],
      balance: { strategy: 'lowest-cost' },
      prices: { lookup: (query) => table[query.model] },
      random: seeded(),
    });
    for (let call = 0; call < 4; call++)
      await chat.chat({ model: 'any', messages: [{ role: 'user', content: 'hello' }], maxTokens: 100 });
    expect(seen).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini']);
    await chat.close();
  });

  it('rejects an unknown strategy with INVALID_ARGUMENT', () => {
    const make = () =>
      createInferRouter({
        targets: [{ name: 'a', transport: target('a') }],
        balance: { strategy: 'round-robin' as 'weighted' },
      });
    expect(make).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
    const group = () =>
      createInferRouter({
        targets: [{ name: 'a', transport: target('a') }],
        route: { group: [{ route: 'a' }], strategy: 'fastest' as 'weighted' },
      });
    expect(group).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
  });
});

describe('LoadStats', () => {
  it('jumps to a slower answer at once and decays back by time', () => {
    const stats = new LoadStats(1_000);
    stats.record(10, 0);
    stats.record(100, 1);
    expect(stats.peakMs).toBe(100);
    expect(stats.ewmaMs).toBeLessThan(11);
    stats.record(10, 5_001);
    expect(stats.peakMs).toBeLessThan(11);
  });

  it('gives a percentile only after enough answers, and ignores a negative or NaN latency', () => {
    const stats = new LoadStats(1_000);
    for (let index = 1; index <= 19; index++) stats.record(index, index);
    expect(stats.percentile(95)).toBeUndefined();
    stats.record(Number.NaN, 20);
    stats.record(-1, 20);
    expect(stats.samples).toBe(19);
    stats.record(20, 21);
    expect(stats.percentile(95)).toBe(19);
    expect(stats.percentile(100)).toBe(20);
  });
});
