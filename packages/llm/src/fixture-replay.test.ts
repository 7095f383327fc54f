import { readFileSync } from 'node:fs';
import { ErrorCode, InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { createAnthropicChatModel } from './anthropic-chat-model.js';
import type { FetchFunction } from './internal/http-request.js';
import { createOpenAIChatModel } from './openai-chat-model.js';
import { createOpenAICompatibleChatModel } from './openai-compatible-chat-model.js';
import type { ChatModel, ChatStreamEvent } from './types.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** A fetch that replays a stored body, split into small chunks as a network would. */
function replay(name: string, status = 200): FetchFunction {
  const text = fixture(name);
  const type = name.endsWith('.sse') ? 'text/event-stream' : 'application/json';
  return async () => {
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 37)
          controller.enqueue(bytes.slice(offset, offset + 37));
        controller.close();
      },
    });
    return new Response(body, { status, headers: { 'content-type': type } });
  };
}

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const request = { model: 'any', messages: [{ role: 'user' as const, content: 'hi' }] };
const openai = (name: string, status?: number): ChatModel =>
  createOpenAIChatModel({ apiKey: 'sk-replay', fetch: replay(name, status) });
const anthropic = (name: string, status?: number): ChatModel =>
  createAnthropicChatModel({ apiKey: 'sk-ant-replay', fetch: replay(name, status) });

describe('stored provider responses', () => {
  it('OpenAI: cached and reasoning tokens', async () => {
    const response = await openai('openai-chat-completion-cached-reasoning.json').chat(request);
    expect(response).toMatchObject({
      id: 'chatcmpl-AsT9pFQ2RbMd6wz3yZ8aVk1QhXk4N',
      model: 'o3-mini-2025-01-31',
      text: 'The answer is 42.',
      usage: { inputTokens: 2006, outputTokens: 300, cacheReadTokens: 1920, reasoningTokens: 256 },
    });
  });

  it('OpenAI: a stream with include_usage', async () => {
    const events = await collect(openai('openai-chat-stream.sse').chatStream(request));
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((event) => event.text)
        .join(''),
    ).toBe('Hello! How can I help?');
    expect(events.at(-2)).toMatchObject({
      usage: { inputTokens: 1234, outputTokens: 8, cacheReadTokens: 1024 },
    });
    expect(events.at(-1)).toMatchObject({ finishReason: 'stop', model: 'gpt-4o-mini-2024-07-18' });
  });

  it('vLLM: a stream without usage', async () => {
    const model = createOpenAICompatibleChatModel({
      baseURL: 'http://vllm:8000/v1',
      fetch: replay('vllm-chat-stream-no-usage.sse'),
    });
    const events = await collect(model.chatStream(request));
    expect(events.at(-2)).toMatchObject({ usage: { inputTokens: undefined, outputTokens: undefined } });
    expect(events.at(-1)).toMatchObject({ finishReason: 'stop' });
  });

  it('Anthropic: cache writes and reads', async () => {
    expect((await anthropic('anthropic-message.json').chat(request)).usage).toMatchObject({
      inputTokens: 188107,
      cacheWriteTokens: 188086,
      outputTokens: 393,
    });
    expect(await anthropic('anthropic-message-cache-read.json').chat(request)).toMatchObject({
      finishReason: 'length',
      usage: { inputTokens: 188089, cacheReadTokens: 188086 },
    });
  });

  it('Anthropic: a stream, and one cut by an overloaded_error event', async () => {
    const events = await collect(anthropic('anthropic-message-stream.sse').chatStream(request));
    expect(events.at(-2)).toMatchObject({
      usage: { inputTokens: 1825, outputTokens: 15, cacheReadTokens: 1800 },
    });
    const error = await collect(anthropic('anthropic-stream-overloaded.sse').chatStream(request)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.Overloaded);
  });

  it('error bodies: context length', async () => {
    const fromOpenAI = await openai('openai-error-context-length.json', 400)
      .chat(request)
      .catch((e: unknown) => e);
    expect((fromOpenAI as InfergateError).code).toBe(ErrorCode.ContextLengthExceeded);
    const fromAnthropic = await anthropic('anthropic-error-prompt-too-long.json', 400)
      .chat(request)
      .catch((e: unknown) => e);
    expect((fromAnthropic as InfergateError).code).toBe(ErrorCode.ContextLengthExceeded);
  });
});
