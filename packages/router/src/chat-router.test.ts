import { ErrorCode, InfergateError } from '@infergate/core';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamEvent } from '@infergate/llm';
import { describe, expect, it } from 'vitest';
import { createChatRouter } from './chat-router.js';
import type { ChatRouterConfig } from './config.js';
import type { AttemptEvent, FallbackEvent } from './router-events.js';

type Behaviour = (request: ChatRequest, call: number) => string | InfergateError;

interface FakeModel extends ChatModel {
  readonly requests: ChatRequest[];
}

/** A ChatModel that answers (or throws like the real adapters) as `behaviour` says. */
function fakeModel(
  provider: string,
  behaviour: Behaviour,
  extra: {
    contextWindow?: number;
    defaultModel?: string;
    stream?: (call: number) => (string | InfergateError)[];
  } = {},
): FakeModel {
  const requests: ChatRequest[] = [];
  const respond = (request: ChatRequest): ChatResponse => {
    requests.push(request);
    const outcome = behaviour(request, requests.length);
    if (outcome instanceof InfergateError) throw outcome;
    return {
      id: `${provider}-${requests.length}`,
      model: request.model,
      text: outcome,
      finishReason: 'stop',
      rawFinishReason: 'stop',
      provider,
      usage: {
        inputTokens: 1,
        outputTokens: 1,
        cacheReadTokens: undefined,
        cacheWriteTokens: undefined,
        reasoningTokens: undefined,
        raw: {},
      },
    };
  };
  return {
    provider,
    requests,
    ...(extra.contextWindow !== undefined ? { contextWindow: extra.contextWindow } : {}),
    ...(extra.defaultModel !== undefined ? { defaultModel: extra.defaultModel } : {}),
    chat: async (request) => respond(request),
    async *chatStream(request): AsyncIterable<ChatStreamEvent> {
      requests.push(request);
      const script = extra.stream?.(requests.length) ?? [];
      for (const step of script) {
        await new Promise((resolve) => setImmediate(resolve));
        if (step instanceof InfergateError) throw step;
        yield { type: 'text-delta', text: step };
      }
      yield {
        type: 'finish',
        finishReason: 'stop',
        rawFinishReason: 'stop',
        id: provider,
        model: request.model,
      };
    },
  };
}

const ok =
  (text: string): Behaviour =>
  () =>
    text;
const rateLimited = () =>
  new InfergateError(ErrorCode.RateLimited, 'rate limited', { httpStatus: 429, retryAfterMs: 2000 });
const unavailable = (status: number) =>
  new InfergateError(ErrorCode.Unavailable, 'upstream', { httpStatus: status });
const request: ChatRequest = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function router(config: Partial<ChatRouterConfig> & Pick<ChatRouterConfig, 'targets'>) {
  return createChatRouter({ retry: { maxRetries: 0 }, breaker: { volumeThreshold: 2 }, ...config });
}

/** A router over `models`, tried in this order, each target named by its model's provider. */
function routerOver(models: FakeModel[], config: Partial<ChatRouterConfig> = {}) {
  return router({ targets: models.map((model) => ({ name: model.provider, model })), ...config });
}

describe('ChatRouter', () => {
  it('falls back from OpenAI to Anthropic on 429, cools OpenAI for Retry-After, trips nothing', async () => {
    const openai = fakeModel('openai', () => rateLimited());
    const anthropic = fakeModel('anthropic', ok('claude'), { defaultModel: 'claude-sonnet-4-5' });
    const chat = routerOver([openai, anthropic]);
    const fallbacks: FallbackEvent[] = [];
    chat.on('fallback', (event) => fallbacks.push(event));
    for (let i = 0; i < 5; i++) expect((await chat.chat(request)).provider).toBe('anthropic');
    expect(openai.requests).toHaveLength(1); // cooled after the first 429
    expect(anthropic.requests[0]?.model).toBe('claude-sonnet-4-5');
    expect(fallbacks).toEqual([
      expect.objectContaining({ from: 'openai', to: 'anthropic', reason: 'backpressure' }),
    ]);
    expect(chat.breakerStates().openai?.kind).toBe('closed');
    await chat.close();
  });

  it.each([500, 503])('falls back on UNAVAILABLE %i and trips the failing breaker', async (status) => {
    const openai = fakeModel('openai', () => unavailable(status));
    const anthropic = fakeModel('anthropic', ok('claude'));
    const chat = routerOver([openai, anthropic]);
    for (let i = 0; i < 4; i++) expect((await chat.chat(request)).text).toBe('claude');
    expect(openai.requests).toHaveLength(2); // open after two failures: skipped since
    expect(chat.breakerStates().openai?.kind).toBe('open');
    await chat.close();
  });

  it('falls back on OVERLOADED 529 without opening the breaker', async () => {
    const anthropic = fakeModel(
      'anthropic',
      () => new InfergateError(ErrorCode.Overloaded, 'busy', { httpStatus: 529 }),
    );
    const openai = fakeModel('openai', ok('gpt'));
    const chat = routerOver([anthropic, openai], {
      cooldownMs: 0,
    });
    for (let i = 0; i < 6; i++) expect((await chat.chat(request)).text).toBe('gpt');
    expect(anthropic.requests).toHaveLength(6);
    expect(chat.breakerStates().anthropic?.kind).toBe('closed');
    await chat.close();
  });

  it('returns a 400 at once: no fallback, no retry, no trip', async () => {
    const openai = fakeModel(
      'openai',
      () => new InfergateError(ErrorCode.InvalidArgument, 'bad', { httpStatus: 400 }),
    );
    const anthropic = fakeModel('anthropic', ok('claude'));
    const chat = routerOver([openai, anthropic], {
      retry: { maxRetries: 3 },
    });
    for (let i = 0; i < 4; i++)
      await expect(chat.chat(request)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect(openai.requests).toHaveLength(4);
    expect(anthropic.requests).toHaveLength(0);
    expect(chat.breakerStates().openai?.kind).toBe('closed');
    await chat.close();
  });

  it('falls back from a Triton-hosted LLM to a hosted provider', async () => {
    const triton = fakeModel(
      'triton',
      () => new InfergateError(ErrorCode.Unavailable, 'connect ECONNREFUSED'),
    );
    const openai = fakeModel('openai', ok('hosted'));
    const chat = router({
      targets: [
        { name: 'llama-on-triton', model: triton, modelName: 'llama' },
        { name: 'openai', model: openai, modelName: 'gpt-4o' },
      ],
    });
    const response = await chat.chat(request);
    expect(response.provider).toBe('openai');
    expect(triton.requests[0]?.model).toBe('llama');
    expect(openai.requests[0]?.model).toBe('gpt-4o');
    await chat.close();
  });

  it('falls back on CONTEXT_LENGTH_EXCEEDED only to a larger window', async () => {
    const tooLong = () =>
      new InfergateError(ErrorCode.ContextLengthExceeded, 'too long', { httpStatus: 400 });
    const small = fakeModel('openai', tooLong, { contextWindow: 8_000 });
    const smaller = fakeModel('openai', ok('smaller'), { contextWindow: 4_000 });
    const large = fakeModel('anthropic', ok('large'), { contextWindow: 200_000 });
    const chat = router({
      targets: [
        { name: 'small', model: small },
        { name: 'smaller', model: smaller },
        { name: 'large', model: large },
      ],
    });
    expect((await chat.chat(request)).text).toBe('large');
    expect(smaller.requests).toHaveLength(0);
    expect(chat.contextWindow).toBe(200_000);
    await chat.close();

    const onlySmaller = router({
      targets: [
        { name: 'small', model: small },
        { name: 'smaller', model: smaller },
      ],
    });
    await expect(onlySmaller.chat(request)).rejects.toMatchObject({ code: ErrorCode.ContextLengthExceeded });
    expect(smaller.requests).toHaveLength(0);
    await onlySmaller.close();
  });

  it('retries with backoff, then succeeds on the same target', async () => {
    const flaky = fakeModel('openai', (_, call) => (call < 3 ? unavailable(502) : 'third time'));
    const chat = createChatRouter({
      targets: [{ name: 'openai', model: flaky, breaker: { volumeThreshold: 10 } }],
      retry: { maxRetries: 2, baseDelayMs: 1 },
    });
    const attempts: AttemptEvent[] = [];
    chat.on('attempt', (event) => attempts.push(event));
    expect((await chat.chat(request)).text).toBe('third time');
    expect(attempts.map((event) => [event.attempt, event.outcome])).toEqual([
      [1, 'failure'],
      [2, 'failure'],
      [3, 'success'],
    ]);
    await chat.close();
  });

  it('stops retrying when the retry budget is spent', async () => {
    const down = fakeModel('openai', () => unavailable(500));
    const chat = createChatRouter({
      targets: [
        { name: 'openai', model: down, breaker: { volumeThreshold: 1000, consecutiveGatewayFailures: 0 } },
      ],
      retry: { maxRetries: 5, baseDelayMs: 0, budget: { ratio: 0.5, minPerSecond: 0 } },
    });
    for (let i = 0; i < 10; i++)
      await expect(chat.chat(request)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    // 10 requests allow 5 retries in the window, whatever maxRetries says.
    expect(down.requests).toHaveLength(15);
    await chat.close();
  });

  it('fails fast with BREAKER_OPEN when every breaker is open, or tries the least recently failed', async () => {
    const a = fakeModel('openai', () => unavailable(500));
    const b = fakeModel('anthropic', (_, call) => (call <= 2 ? unavailable(500) : 'b is back'));
    const config = {
      targets: [
        { name: 'a', model: a },
        { name: 'b', model: b },
      ],
      breaker: { volumeThreshold: 2, openMs: 60_000 },
    };
    const failFast = router(config);
    for (let i = 0; i < 2; i++)
      await expect(failFast.chat(request)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    const error = (await failFast.chat(request).catch((caught: unknown) => caught)) as InfergateError;
    expect(error).toMatchObject({ code: ErrorCode.BreakerOpen, retryable: true });
    expect(error.retryAfterMs).toBeGreaterThan(40_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(60_000);
    await failFast.close();

    const lastResort = router({
      ...config,
      whenAllOpen: 'least-recently-failed',
      initialState: failFast.toJSON(),
    });
    expect(lastResort.breakerStates()).toMatchObject({ a: { kind: 'open' }, b: { kind: 'open' } });
    // `a` failed before `b`, so `a` gets the call (and fails); then `a` is the most recent.
    await expect(lastResort.chat(request)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect((await lastResort.chat(request)).text).toBe('b is back');
    await lastResort.close();
  });

  it('does not fall back when the caller cancels', async () => {
    const controller = new AbortController();
    const slow: ChatModel = {
      provider: 'openai',
      chat: (_, options) =>
        new Promise((_resolve, reject) =>
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason)),
        ),
      chatStream: () => {
        throw new Error('unused');
      },
    };
    const other = fakeModel('anthropic', ok('never'));
    const chat = router({
      targets: [
        { name: 'slow', model: slow },
        { name: 'other', model: other },
      ],
    });
    const pending = chat.chat(request, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    expect(other.requests).toHaveLength(0);
    await chat.close();
  });

  it('times out an attempt on its own and falls back', async () => {
    const hanging: ChatModel = {
      provider: 'triton',
      chat: (_, options) =>
        new Promise((_resolve, reject) =>
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason)),
        ),
      chatStream: () => {
        throw new Error('unused');
      },
    };
    const chat = router({
      targets: [
        { name: 'hanging', model: hanging },
        { name: 'openai', model: fakeModel('openai', ok('fast')) },
      ],
      attemptTimeoutMs: 20,
    });
    const attempts: AttemptEvent[] = [];
    chat.on('attempt', (event) => attempts.push(event));
    expect((await chat.chat(request)).text).toBe('fast');
    expect(attempts[0]).toMatchObject({
      target: 'hanging',
      outcome: 'failure',
      error: { code: ErrorCode.DeadlineExceeded },
    });
    await chat.close();
  });

  describe('streams', () => {
    it('fall back before the first chunk', async () => {
      const openai = fakeModel('openai', ok(''), { stream: () => [unavailable(503)] });
      const anthropic = fakeModel('anthropic', ok(''), { stream: () => ['Hel', 'lo'] });
      const chat = routerOver([openai, anthropic]);
      let text = '';
      for await (const event of chat.chatStream(request)) if (event.type === 'text-delta') text += event.text;
      expect(text).toBe('Hello');
      await chat.close();
    });

    it('end with a typed error carrying the partial text after the first chunk', async () => {
      const openai = fakeModel('openai', ok(''), { stream: () => ['Hel', 'lo', unavailable(502)] });
      const anthropic = fakeModel('anthropic', ok(''), { stream: () => ['never'] });
      const chat = routerOver([openai, anthropic]);
      let text = '';
      const error = await (async () => {
        for await (const event of chat.chatStream(request))
          if (event.type === 'text-delta') text += event.text;
      })().catch((caught: InfergateError) => caught);
      expect(text).toBe('Hello');
      expect(error).toMatchObject({
        code: ErrorCode.Unavailable,
        retryable: false,
        details: { target: 'openai', partial: { text: 'Hello' }, afterFirstChunk: true },
      });
      expect(anthropic.requests).toHaveLength(0);
      await chat.close();
    });

    it('leaving the loop early cancels the attempt without counting a failure', async () => {
      const openai = fakeModel('openai', ok(''), { stream: () => ['a', 'b', 'c'] });
      const chat = router({ targets: [{ name: 'openai', model: openai }] });
      const attempts: AttemptEvent[] = [];
      chat.on('attempt', (event) => attempts.push(event));
      for await (const _ of chat.chatStream(request)) break;
      expect(attempts).toEqual([expect.objectContaining({ outcome: 'cancelled' })]);
      expect(chat.breakerStates().openai?.kind).toBe('closed');
      await chat.close();
    });
  });
});
