// Test doubles for the router's unit tests (packages/router/src/*.test.ts): an in-memory infer
// target, a chat answer, and the routers a test file makes, closed after each test. Kept out of the
// package so that nothing here is built or published.
import { ErrorCode, InfergateError, type InferResponse, type InferTransport } from '@infergate/core';
import type { ChatResponse } from '@infergate/llm';
import { createInferRouter, type InferRouter, type RouterOptions } from '@infergate/router';
import { afterEach, beforeEach, vi } from 'vitest';

export interface FakeTarget extends InferTransport {
  calls: number;
  /** The signal of every call, to see which were cancelled. */
  signals: AbortSignal[];
  /** While true, calls fail at once with UNAVAILABLE. */
  down: boolean;
  /** While true, calls wait for `release()`. */
  hold: boolean;
  /** Answers every held call. */
  release(): void;
}

export interface FakeTargetOptions {
  /** How long each call takes (fake time under fake timers); unset: it answers at once. */
  delayMs?: number;
  /** A call still in its `delayMs` stops with its signal's reason when the signal aborts. */
  stopsOnAbort?: boolean;
  down?: boolean;
  hold?: boolean;
}

/** Waits `ms`; with `stopsOnAbort`, rejects with the signal's reason once it aborts. */
function wait(ms: number, signal: AbortSignal, stopsOnAbort: boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    if (stopsOnAbort)
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
  });
}

/** An in-memory target whose answers carry `id: name`; it never streams. */
export function fakeTarget(name: string, options: FakeTargetOptions = {}): FakeTarget {
  let held: (() => void)[] = [];
  const self: FakeTarget = {
    calls: 0,
    signals: [],
    down: options.down ?? false,
    hold: options.hold ?? false,
    release() {
      const now = held;
      held = [];
      for (const resolve of now) resolve();
    },
    async infer(_request, callOptions) {
      self.calls += 1;
      const signal = callOptions.signal ?? new AbortController().signal;
      self.signals.push(signal);
      if (self.down) throw new InfergateError(ErrorCode.Unavailable, 'connection refused');
      if (self.hold) await new Promise<void>((resolve) => held.push(resolve));
      else if (options.delayMs !== undefined)
        await wait(options.delayMs, signal, options.stopsOnAbort ?? false);
      const response: InferResponse = {
        model: 'm',
        modelVersion: '1',
        id: name,
        outputs: [],
        parameters: {},
      };
      return response;
    },
    // biome-ignore lint/correctness/useYield: these targets never stream
    async *stream() {
      throw new InfergateError(ErrorCode.Unimplemented, 'no streams here');
    },
  };
  return self;
}

/** An Anthropic answer of `text` to a call for `model`: 10 tokens in, 10 out. */
export function chatAnswer(id: string, model: string, text = id): ChatResponse {
  return {
    id,
    model,
    text,
    finishReason: 'stop',
    rawFinishReason: 'stop',
    provider: 'anthropic',
    usage: {
      inputTokens: 10,
      outputTokens: 10,
      cacheReadTokens: undefined,
      cacheWriteTokens: undefined,
      reasoningTokens: undefined,
      raw: {},
    },
  };
}

export interface TestRouters {
  /** A new infer router, closed after the test. */
  router(options: RouterOptions): InferRouter;
  /** Closes `created` (any router) after the test. */
  closeAfterTest<T extends { close(): Promise<void> }>(created: T): T;
}

/**
 * Registers this file's hooks: every router made through the answer is closed after each test;
 * with `fakeTime`, each test runs under fake timers (setTimeout, Date and performance).
 */
export function routersPerTest(options: { fakeTime?: boolean } = {}): TestRouters {
  const open: { close(): Promise<void> }[] = [];
  if (options.fakeTime)
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    });
  afterEach(async () => {
    if (options.fakeTime) vi.useRealTimers();
    await Promise.all(open.splice(0).map((created) => created.close()));
  });
  const closeAfterTest = <T extends { close(): Promise<void> }>(created: T): T => {
    open.push(created);
    return created;
  };
  return {
    router: (routerOptions) => closeAfterTest(createInferRouter(routerOptions)),
    closeAfterTest,
  };
}
