import { ErrorCode, InfergateError } from '@infergate/core';
import { type FakeLlmServer, fakeKeyMarker, startFakeAnthropic } from '@infergate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicChatModel } from './anthropic-chat-model.js';
import type { ChatModel, ChatStreamEvent } from './types.js';

const KEY = 'sk-ant-test-key-0123456789';
let server: FakeLlmServer;
let model: ChatModel;

beforeAll(async () => {
  server = await startFakeAnthropic({ apiKey: KEY, cacheReadTokens: 10, cacheWriteTokens: 5 });
  model = createAnthropicChatModel({ apiKey: KEY, baseURL: server.url });
});
beforeEach(() => server.reset());
afterAll(() => server.stop());

const request = {
  model: 'claude-sonnet-4-5',
  messages: [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: 'hello big world' },
  ],
};

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('createAnthropicChatModel', () => {
  it('sends the Messages wire format and normalizes cache usage', async () => {
    const response = await model.chat({ ...request, stop: ['never'], temperature: 0 });
    expect(response).toMatchObject({
      model: 'claude-sonnet-4-5',
      text: 'echo: hello big world',
      finishReason: 'stop',
      rawFinishReason: 'end_turn',
      provider: 'anthropic',
    });
    expect(response.id).toMatch(/^msg_fake_/);
    // 3 user words + 2 system words uncached, plus 10 read and 5 written.
    expect(response.usage).toMatchObject({
      inputTokens: 20,
      outputTokens: 4,
      cacheReadTokens: 10,
      cacheWriteTokens: 5,
      reasoningTokens: undefined,
    });
    const recorded = server.requests[0];
    expect(recorded?.path).toBe('/v1/messages');
    expect(recorded?.headers['x-api-key']).toBe(fakeKeyMarker(KEY));
    expect(recorded?.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded?.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'be brief',
      messages: [{ role: 'user', content: 'hello big world' }],
      temperature: 0,
      stop_sequences: ['never'],
    });
  });

  it('streams deltas and merges message_start and message_delta usage', async () => {
    const events = await collect(model.chatStream({ ...request, maxTokens: 3 }));
    expect(events.filter((event) => event.type === 'text-delta').map((event) => event.text)).toEqual([
      'echo:',
      ' hello',
      ' big',
    ]);
    expect(events.at(-2)).toMatchObject({
      type: 'usage',
      usage: { inputTokens: 20, outputTokens: 3, cacheReadTokens: 10, cacheWriteTokens: 5 },
    });
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: 'length',
      rawFinishReason: 'max_tokens',
    });
  });

  it('maps refusal to content_filter', async () => {
    server.setFault({ kind: 'content-filter' });
    expect(await model.chat(request)).toMatchObject({
      finishReason: 'content_filter',
      rawFinishReason: 'refusal',
    });
  });

  it('aborts the HTTP request when the consumer leaves the loop early', async () => {
    const slow = await startFakeAnthropic({ chunkDelayMs: 30, reply: 'a b c d e f g h' });
    try {
      const chat = createAnthropicChatModel({ apiKey: KEY, baseURL: slow.url });
      for await (const event of chat.chatStream(request)) if (event.type === 'text-delta') break;
      await expect.poll(() => slow.disconnects, { interval: 10 }).toBe(1);
    } finally {
      await slow.stop();
    }
  });

  it('reads ANTHROPIC_API_KEY and fails without one', async () => {
    const previous = process.env.ANTHROPIC_API_KEY;
    try {
      delete process.env.ANTHROPIC_API_KEY;
      const error = await createAnthropicChatModel({ baseURL: server.url })
        .chat(request)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InfergateError);
      expect((error as InfergateError).code).toBe(ErrorCode.Unauthenticated);
      process.env.ANTHROPIC_API_KEY = KEY;
      expect((await createAnthropicChatModel({ baseURL: server.url }).chat(request)).text).toContain('echo');
    } finally {
      if (previous === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = previous;
    }
  });
});
