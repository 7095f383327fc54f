import { ErrorCode, InfergateError } from '@infergate/core';
import { type FakeLlmServer, fakeKeyMarker, startFakeOpenAI } from '@infergate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from './openai-chat-model.js';
import type { ChatModel, ChatStreamEvent } from './types.js';

const KEY = 'sk-test-openai-key-0123456789';
let server: FakeLlmServer;
let model: ChatModel;

beforeAll(async () => {
  server = await startFakeOpenAI({ apiKey: KEY, cachedTokens: 4, reasoningTokens: 2 });
  model = createOpenAIChatModel({ apiKey: KEY, baseURL: server.url, organization: 'org-1' });
});
beforeEach(() => server.reset());
afterAll(() => server.stop());

const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello big world' }] };

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InfergateError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('createOpenAIChatModel', () => {
  it('chats over JSON and normalizes usage', async () => {
    const response = await model.chat({ ...hello, maxTokens: 50, temperature: 0.2, stop: ['STOP'] });
    expect(response).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-fake-\d+$/),
      model: 'gpt-4o-mini',
      text: 'echo: hello big world',
      finishReason: 'stop',
      rawFinishReason: 'stop',
      provider: 'openai',
    });
    // 3 prompt words + 4 cached; 4 reply words + 2 reasoning.
    expect(response.usage).toMatchObject({
      inputTokens: 7,
      outputTokens: 6,
      cacheReadTokens: 4,
      cacheWriteTokens: undefined,
      reasoningTokens: 2,
    });
    const recorded = server.requests[0];
    expect(recorded?.path).toBe('/v1/chat/completions');
    expect(recorded?.headers.authorization).toBe(`Bearer ${fakeKeyMarker(KEY)}`);
    expect(recorded?.headers['openai-organization']).toBe('org-1');
    expect(recorded?.body).toMatchObject({ max_completion_tokens: 50, temperature: 0.2, stop: ['STOP'] });
  });

  it('streams text deltas, then usage, then finish', async () => {
    const events = await collect(model.chatStream(hello));
    const text = events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join('');
    expect(text).toBe('echo: hello big world');
    expect(events.at(-2)).toMatchObject({
      type: 'usage',
      usage: { inputTokens: 7, outputTokens: 6, cacheReadTokens: 4 },
    });
    expect(events.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      rawFinishReason: 'stop',
      id: expect.stringMatching(/^chatcmpl-fake-\d+$/),
      model: 'gpt-4o-mini',
    });
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("reports 'length' when max tokens cut the reply, and content_filter as a finish reason", async () => {
    expect(await model.chat({ ...hello, maxTokens: 2 })).toMatchObject({
      text: 'echo: hello',
      finishReason: 'length',
    });
    server.setFault({ kind: 'content-filter-finish' });
    expect(await model.chat(hello)).toMatchObject({ finishReason: 'content_filter' });
  });

  it('uses defaultModel when the request names none', async () => {
    const withDefault = createOpenAIChatModel({ apiKey: KEY, baseURL: server.url, defaultModel: 'gpt-4.1' });
    expect(withDefault.defaultModel).toBe('gpt-4.1');
    expect((await withDefault.chat({ ...hello, model: '' })).model).toBe('gpt-4.1');
    expect((await failure(model.chat({ ...hello, model: '' }))).code).toBe(ErrorCode.InvalidArgument);
  });

  it('aborts the HTTP request when the consumer leaves the loop early', async () => {
    const slow = await startFakeOpenAI({
      chunkDelayMs: 30,
      reply: 'one two three four five six seven eight',
    });
    try {
      const chat = createOpenAIChatModel({ apiKey: KEY, baseURL: slow.url });
      const seen: string[] = [];
      for await (const event of chat.chatStream(hello)) {
        if (event.type === 'text-delta') seen.push(event.text);
        if (seen.length === 2) break;
      }
      expect(seen).toEqual(['one', ' two']);
      await expect.poll(() => slow.disconnects, { interval: 10 }).toBe(1);
    } finally {
      await slow.stop();
    }
  });

  it('turns timeoutMs into DEADLINE_EXCEEDED and an aborted signal into CANCELLED', async () => {
    server.setFault({ kind: 'slow-first-byte', delayMs: 60_000 }); // outlasts every deadline below
    const timeout = await failure(model.chat(hello, { timeoutMs: 50 }));
    expect(timeout.code).toBe(ErrorCode.DeadlineExceeded);
    const controller = new AbortController();
    const pending = model.chat(hello, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await failure(pending)).code).toBe(ErrorCode.Cancelled);
    const streamed = await failure(collect(model.chatStream(hello, { timeoutMs: 50 })));
    expect(streamed.code).toBe(ErrorCode.DeadlineExceeded);
    await expect.poll(() => server.disconnects, { interval: 10 }).toBe(3);
    const already = AbortSignal.abort();
    expect((await failure(model.chat(hello, { signal: already }))).code).toBe(ErrorCode.Cancelled);
  });

  it('fails with UNAUTHENTICATED when there is no key', async () => {
    const previous = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const keyless = createOpenAIChatModel({ baseURL: server.url });
      expect((await failure(keyless.chat(hello))).code).toBe(ErrorCode.Unauthenticated);
      expect(server.calls).toBe(0);
      process.env.OPENAI_API_KEY = KEY;
      expect((await createOpenAIChatModel({ baseURL: server.url }).chat(hello)).text).toContain('echo');
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });
});
