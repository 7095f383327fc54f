import { ErrorCode } from '@infergate/core';
import { type FakeLlmServer, startFakeOpenAI } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatibleChatModel } from './openai-compatible-chat-model.js';
import type { ChatStreamEvent } from './types.js';

let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeOpenAI({ omitUsage: true });
});
afterAll(() => server.stop());

const request = {
  model: 'meta-llama/Llama-3.1-8B-Instruct',
  messages: [{ role: 'user' as const, content: 'hi there' }],
};

describe('createOpenAICompatibleChatModel', () => {
  it('tolerates missing usage: every count stays undefined', async () => {
    const model = createOpenAICompatibleChatModel({ baseURL: `${server.url}/`, provider: 'vllm' });
    const response = await model.chat({ ...request, maxTokens: 8 });
    expect(response).toMatchObject({ provider: 'vllm', text: 'echo: hi there', finishReason: 'stop' });
    expect(response.usage).toEqual({
      inputTokens: undefined,
      outputTokens: undefined,
      cacheReadTokens: undefined,
      cacheWriteTokens: undefined,
      reasoningTokens: undefined,
      raw: undefined,
    });
    expect(server.requests.at(-1)?.body).toMatchObject({ max_tokens: 8 });
    const events: ChatStreamEvent[] = [];
    for await (const event of model.chatStream(request)) events.push(event);
    expect(events.find((event) => event.type === 'usage')).toMatchObject({
      usage: { inputTokens: undefined },
    });
  });

  it('sends no Authorization without an apiKey and never reads OPENAI_API_KEY', async () => {
    const previous = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-must-not-leak-to-other-servers';
    try {
      await createOpenAICompatibleChatModel({ baseURL: server.url }).chat(request);
      expect(server.requests.at(-1)?.headers.authorization).toBeUndefined();
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });

  it('rejects bad options with INVALID_ARGUMENT', () => {
    expect(() => createOpenAICompatibleChatModel({ baseURL: 'not a url' })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(() => createOpenAICompatibleChatModel({ baseURL: server.url, timeoutMs: -1 })).toThrow(
      /timeoutMs/,
    );
  });
});
