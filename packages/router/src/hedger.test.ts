import { buildInferRequest, ErrorCode } from '@infergate/core';
import { createCostTracker, withCost } from '@infergate/cost';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamEvent } from '@infergate/llm';
import { describe, expect, it, vi } from 'vitest';
import { chatAnswer, type FakeTarget, fakeTarget, routersPerTest } from '../../../test/unit/router-fakes.js';
import { createChatRouter } from './chat-router.js';
import type { HedgeOptions } from './hedger.js';
import type { HedgeEvent } from './router-events.js';

const request = buildInferRequest('m', [
  { name: 'IN', datatype: 'FP32', shape: [1], data: new Float32Array([1]) },
]);

/** A target answering after `delayMs` of fake time; it stops early when its signal aborts. */
const target = (name: string, delayMs: number): FakeTarget =>
  fakeTarget(name, { delayMs, stopsOnAbort: true });

const { router, closeAfterTest } = routersPerTest({ fakeTime: true });

/** Lets fake time run `ms`, then returns the call's outcome. */
/** A router over `targets` (each named by its key, in order) that hedges with `hedge`. */
function hedgedOver(targets: Record<string, FakeTarget>, hedge: HedgeOptions) {
  return router({
    targets: Object.entries(targets).map(([name, transport]) => ({ name, transport })),
    hedge,
  });
}

async function after<R>(ms: number, call: Promise<R>): Promise<R> {
  const settled = call.then(
    (value) => value,
    (error: unknown) => {
      throw error;
    },
  );
  settled.catch(() => undefined);
  await vi.advanceTimersByTimeAsync(ms);
  return settled;
}

describe('hedged requests', () => {
  it('sends a slow idempotent call to a second target after the delay; the first answer wins, the other is cancelled', async () => {
    const slow = target('slow', 1_000);
    const fast = target('fast', 10);
    const routed = hedgedOver({ slow, fast }, { delay: 50, budget: 1 });
    const answer = await after(60, routed.infer(request, { idempotent: true }));
    expect(answer.id).toBe('fast');
    expect(slow.signals[0]?.aborted).toBe(true);
    expect(slow.signals[0]?.reason).toMatchObject({ code: ErrorCode.Cancelled });
    // The cancelled attempt does not count against the slow target's breaker.
    expect(routed.breakerStates().slow?.kind).toBe('closed');
  });

  it('never hedges a call that is not marked idempotent', async () => {
    const slow = target('slow', 200);
    const fast = target('fast', 10);
    const routed = hedgedOver({ slow, fast }, { delay: 50, budget: 1 });
    expect((await after(200, routed.infer(request))).id).toBe('slow');
    expect(fast.calls).toBe(0);
  });

  it('keeps hedges within the budget', async () => {
    const slow = target('slow', 100);
    const fast = target('fast', 100);
    const routed = hedgedOver({ slow, fast }, { delay: 10, budget: 0.1 });
    for (let call = 0; call < 30; call++) await after(100, routed.infer(request, { idempotent: true }));
    // 30 hedgeable calls at 10%: three hedges, every other call stayed single.
    expect(fast.calls).toBe(3);
    expect(slow.calls).toBe(30);
  });

  it('reports each call that outlasted the delay as a hedge event: sent, or refused by the budget', async () => {
    const slow = target('slow', 100);
    const fast = target('fast', 100);
    const routed = hedgedOver({ slow, fast }, { delay: 10, budget: 0.1 });
    const events: HedgeEvent[] = [];
    routed.on('hedge', (event) => events.push(event));
    for (let call = 0; call < 20; call++) await after(100, routed.infer(request, { idempotent: true }));
    expect(events).toHaveLength(20);
    expect(events.filter((event) => event.outcome === 'sent')).toHaveLength(fast.calls);
    expect(events.filter((event) => event.outcome === 'refused')).toHaveLength(20 - fast.calls);
    expect(events[0]).toEqual({ target: 'slow', delayMs: 10, outcome: 'refused' });
  });

  it('fails with DEADLINE_EXCEEDED when the hedge loses to the deadline too, and cancels both', async () => {
    const a = target('a', 1_000);
    const b = target('b', 1_000);
    const routed = hedgedOver({ a, b }, { delay: 50, budget: 1 });
    await expect(
      after(100, routed.infer(request, { idempotent: true, timeoutMs: 100 })),
    ).rejects.toMatchObject({
      code: ErrorCode.DeadlineExceeded,
    });
    expect([a.calls, b.calls]).toEqual([1, 1]);
    expect(a.signals[0]?.aborted && b.signals[0]?.aborted).toBe(true);
  });

  it('never sends a hedge to the first target, even when whenAllOpen would force one: no other target, no hedge', async () => {
    const only = target('only', 1_000);
    const spare = target('spare', 10);
    const routed = router({
      targets: [
        { name: 'only', transport: only },
        { name: 'spare', transport: spare },
      ],
      // The route reaches one target: a hedge has nowhere else to go.
      route: 'only',
      whenAllOpen: 'least-recently-failed',
      hedge: { delay: 50, budget: 1 },
    });
    expect((await after(1_000, routed.infer(request, { idempotent: true }))).id).toBe('only');
    expect([only.calls, spare.calls]).toEqual([1, 0]);
    expect(only.signals[0]?.aborted).toBe(false);
  });

  it('sends a hedge forced through whenAllOpen to the other target, not back to the first', async () => {
    const first = target('first', 1_000);
    const other = target('other', 10);
    const openedAt = Date.now();
    const routed = router({
      targets: [
        { name: 'first', transport: first },
        { name: 'other', transport: other },
      ],
      whenAllOpen: 'least-recently-failed',
      initialState: {
        other: {
          version: 1,
          state: { kind: 'open', trips: 1, openedAt, halfOpenAt: openedAt + 600_000 },
          lastFailureAt: openedAt,
        },
      },
      hedge: { delay: 50, budget: 1 },
    });
    expect((await after(1_000, routed.infer(request, { idempotent: true }))).id).toBe('other');
    expect([first.calls, other.calls]).toEqual([1, 1]);
  });

  it('waits for the p95 of the first target before hedging, and not at all until it is known', async () => {
    const first = target('first', 10);
    const second = target('second', 10);
    const routed = hedgedOver({ first, second }, { budget: 1 });
    for (let call = 0; call < 20; call++) await after(10, routed.infer(request, { idempotent: true }));
    expect(second.calls).toBe(0);
    // Now p95 is 10 ms: a call still running after 10 ms is hedged.
    const slowAgain = target('first', 500);
    first.infer = slowAgain.infer;
    expect((await after(25, routed.infer(request, { idempotent: true }))).id).toBe('second');
  });

  it('hedges the first slow call after a lull longer than the budget window', async () => {
    const first = target('first', 10);
    const second = target('second', 10);
    const routed = hedgedOver({ first, second }, { delay: 50, budget: 0.1, windowMs: 10_000 });
    for (let call = 0; call < 100; call++) await after(10, routed.infer(request, { idempotent: true }));
    expect(second.calls).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    first.infer = target('first', 1_000).infer;
    // The 100 calls before the lull pay for this hedge: it goes out after 50 ms and wins.
    expect((await after(1_000, routed.infer(request, { idempotent: true }))).id).toBe('second');
  });

  it('keeps the p95 delay at the first target’s real p95 when hedges win, so about 5% of calls are hedged', async () => {
    // The first target answers in 10, 11, …, 109 ms in turn (p95: 104 ms); the second in 2 ms, so
    // nearly every hedge wins and cancels its first attempt. Were a cancelled attempt not counted, the
    // slowest answers would leave the p95's window and the delay would sink, window after window,
    // until the budget (here: every call) alone stopped the hedges.
    const speeds = Array.from({ length: 100 }, (_, index) => target('first', 10 + index));
    let turn = 0;
    const first = target('first', 0);
    first.infer = (call, options) => (speeds[turn++ % speeds.length] as FakeTarget).infer(call, options);
    const second = target('second', 2);
    const routed = hedgedOver({ first, second }, { budget: 1 });
    for (let call = 0; call < 1_000; call++) await after(110, routed.infer(request, { idempotent: true }));
    const before = second.calls;
    for (let call = 0; call < 200; call++) await after(110, routed.infer(request, { idempotent: true }));
    // 5% of 200 calls outlast the p95: 10, give or take the window's rank rounding.
    expect(second.calls - before).toBeGreaterThanOrEqual(5);
    expect(second.calls - before).toBeLessThanOrEqual(20);
  });
});

function chatModel(
  name: string,
  delayMs: number,
  stream: { firstMs: number; restMs: number } = { firstMs: 0, restMs: 0 },
): ChatModel & { calls: number } {
  const response = (request: ChatRequest): ChatResponse => chatAnswer(name, request.model);
  const self = {
    provider: 'anthropic',
    defaultModel: 'claude-3-5-sonnet',
    calls: 0,
    async chat(request: ChatRequest) {
      self.calls += 1;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return response(request);
    },
    async *chatStream(): AsyncGenerator<ChatStreamEvent> {
      self.calls += 1;
      await new Promise((resolve) => setTimeout(resolve, stream.firstMs));
      yield { type: 'text-delta', text: `${name}-1` } as ChatStreamEvent;
      await new Promise((resolve) => setTimeout(resolve, stream.restMs));
      yield { type: 'text-delta', text: `${name}-2` } as ChatStreamEvent;
    },
  };
  return self;
}

describe('hedged chat calls', () => {
  it('a hedge refused with BUDGET_EXCEEDED is dropped; the call goes on and is charged once', async () => {
    // One reservation of claude-3-5-sonnet with 50 output tokens (≈ $0.0008) fits under $0.001; two do not.
    const tracker = createCostTracker({ budgets: [{ id: 'all', window: 'day', hardLimitUsd: 0.001 }] });
    const slow = chatModel('slow', 100);
    const fast = chatModel('fast', 10);
    const chat = createChatRouter({
      targets: [
        { name: 'slow', model: withCost(slow, { tracker }) },
        { name: 'fast', model: withCost(fast, { tracker }) },
      ],
      hedge: { delay: 20, budget: 1 },
    });
    closeAfterTest(chat);
    const request: ChatRequest = {
      model: 'claude-3-5-sonnet',
      messages: [{ role: 'user', content: 'hi' }],
      maxTokens: 50,
    };
    const refused: string[] = [];
    chat.on('attempt', (event) => {
      if (event.error !== undefined) refused.push(`${event.target} ${event.error.code}`);
    });
    const answer = await after(100, chat.chat(request, { idempotent: true }));
    expect(answer.text).toBe('slow');
    expect(refused).toEqual(['fast BUDGET_EXCEEDED']);
    // The hedge was refused before reaching the model.
    expect(fast.calls).toBe(0);
    // Charged once: the call's usage (10 input + 10 output tokens).
    expect((await tracker.report()).totalUsd).toBeCloseTo((10 * 3 + 10 * 15) / 1_000_000, 9);
  });

  it('hedges a stream until its first chunk: the faster first chunk wins, the other stream is closed', async () => {
    const late = chatModel('late', 0, { firstMs: 500, restMs: 0 });
    const early = chatModel('early', 0, { firstMs: 10, restMs: 10 });
    const chat = createChatRouter({
      targets: [
        { name: 'late', model: late },
        { name: 'early', model: early },
      ],
      hedge: { delay: 50, budget: 1 },
    });
    closeAfterTest(chat);
    const read = async () => {
      const texts: string[] = [];
      for await (const event of chat.chatStream(
        { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        { idempotent: true },
      ))
        if (event.type === 'text-delta') texts.push(event.text);
      return texts;
    };
    expect(await after(600, read())).toEqual(['early-1', 'early-2']);
  });

  it('never hedges a stream whose first chunk came before the delay, however slow the rest', async () => {
    const first = chatModel('first', 0, { firstMs: 5, restMs: 300 });
    const second = chatModel('second', 0, { firstMs: 5, restMs: 0 });
    const chat = createChatRouter({
      targets: [
        { name: 'first', model: first },
        { name: 'second', model: second },
      ],
      hedge: { delay: 50, budget: 1 },
    });
    closeAfterTest(chat);
    const texts: string[] = [];
    const reading = (async () => {
      for await (const event of chat.chatStream(
        { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        { idempotent: true },
      ))
        if (event.type === 'text-delta') texts.push(event.text);
    })();
    await after(400, reading);
    expect(texts).toEqual(['first-1', 'first-2']);
    expect(second.calls).toBe(0);
  });
});
