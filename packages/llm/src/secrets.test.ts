import { inspect } from 'node:util';
import { InfergateError } from '@infergate/core';
import { type FakeLlmServer, startFakeAnthropic, startFakeOpenAI } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { createAnthropicChatModel } from './anthropic-chat-model.js';
import { createOpenAIChatModel } from './openai-chat-model.js';

const OPENAI_KEY = 'sk-proj-LEAKCHECK-openai-9f8e7d6c5b4a';
const ANTHROPIC_KEY = 'sk-ant-LEAKCHECK-anthropic-1a2b3c4d';
let openaiServer: FakeLlmServer;
let anthropicServer: FakeLlmServer;
let tracing: ReturnType<typeof installInMemoryTracing>;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  // The fakes echo what they are told: make them answer 401 quoting the key back.
  openaiServer = await startFakeOpenAI({ apiKey: 'another-key-entirely' });
  anthropicServer = await startFakeAnthropic({ apiKey: 'another-key-entirely' });
});
afterAll(async () => {
  tracing.uninstall();
  await openaiServer.stop();
  await anthropicServer.stop();
});

function everyRendering(value: unknown): string {
  return [JSON.stringify(value), inspect(value, { depth: 10, showHidden: true }), String(value)].join('\n');
}

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('API keys', () => {
  it('never appear in errors, models, recorded requests or spans', async () => {
    const openai = createOpenAIChatModel({ apiKey: OPENAI_KEY, baseURL: openaiServer.url });
    const anthropic = createAnthropicChatModel({ apiKey: ANTHROPIC_KEY, baseURL: anthropicServer.url });
    const fakeEcho = (url: string) =>
      createOpenAIChatModel({
        apiKey: OPENAI_KEY,
        baseURL: url,
        // A provider that quotes the key in its error message.
        fetch: async () =>
          new Response(JSON.stringify({ error: { message: `Incorrect API key provided: ${OPENAI_KEY}` } }), {
            status: 401,
            headers: { 'content-type': 'application/json' },
          }),
      });
    const failures: unknown[] = [];
    for (const model of [openai, anthropic, fakeEcho(openaiServer.url)]) {
      failures.push(await model.chat(request).catch((error: unknown) => error));
      failures.push(
        await (async () => {
          for await (const _event of model.chatStream(request)) {
            // drain
          }
        })().catch((error: unknown) => error),
      );
    }
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(InfergateError);
      const text = everyRendering(failure) + everyRendering((failure as InfergateError).toJSON());
      expect(text).not.toContain(OPENAI_KEY);
      expect(text).not.toContain(ANTHROPIC_KEY);
    }
    const elsewhere = everyRendering([openai, anthropic, openaiServer.requests, anthropicServer.requests]);
    expect(elsewhere).not.toContain(OPENAI_KEY);
    expect(elsewhere).not.toContain(ANTHROPIC_KEY);
    const spans = tracing.exporter.getFinishedSpans().map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      events: span.events,
    }));
    expect(spans.length).toBeGreaterThanOrEqual(6);
    expect(JSON.stringify(spans)).not.toContain('LEAKCHECK');
  });
});
