import { type FakeLlmServer, startFakeAnthropic, startFakeOpenAI } from '@infergate/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { createAnthropicChatModel } from './anthropic-chat-model.js';
import { createOpenAIChatModel } from './openai-chat-model.js';

let openaiServer: FakeLlmServer;
let anthropicServer: FakeLlmServer;
let tracing: ReturnType<typeof installInMemoryTracing>;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  openaiServer = await startFakeOpenAI();
  anthropicServer = await startFakeAnthropic();
});
beforeEach(() => {
  tracing.exporter.reset();
  openaiServer.reset();
});
afterAll(async () => {
  tracing.uninstall();
  await openaiServer.stop();
  await anthropicServer.stop();
});

const request = {
  model: 'gpt-4o-mini',
  maxTokens: 100,
  temperature: 0.5,
  messages: [{ role: 'user' as const, content: 'secret prompt words' }],
};

describe('GenAI spans', () => {
  it('records one CLIENT span per call with the GenAI attributes and no content', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-span', baseURL: openaiServer.url });
    const response = await model.chat(request);
    const [span] = tracing.exporter.getFinishedSpans();
    expect(span?.name).toBe('chat gpt-4o-mini');
    expect(span?.kind).toBe(SpanKind.CLIENT);
    const port = Number(new URL(openaiServer.url).port);
    expect(span?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 100,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.id': response.id,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 4,
      // OpenAI's usage states cached and reasoning counts (0 here): known, so recorded.
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 0,
      'server.address': '127.0.0.1',
      'server.port': port,
    });
    expect(JSON.stringify(span?.attributes)).not.toContain('secret prompt');
    expect(openaiServer.requests[0]?.headers.traceparent).toMatch(
      new RegExp(`^00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01$`),
    );
  });

  it('records prompt and completion only with captureContent', async () => {
    const model = createOpenAIChatModel({
      apiKey: 'sk-span',
      baseURL: openaiServer.url,
      captureContent: true,
    });
    for await (const _event of model.chatStream(request)) {
      // drain
    }
    const [span] = tracing.exporter.getFinishedSpans();
    expect(JSON.parse(String(span?.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'secret prompt words' }] },
    ]);
    expect(JSON.parse(String(span?.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'echo: secret prompt words' }],
        finish_reason: 'stop',
      },
    ]);
  });

  it('marks failures with error.type', async () => {
    const model = createAnthropicChatModel({ apiKey: 'sk-ant-span', baseURL: anthropicServer.url });
    anthropicServer.setFault({ kind: 'overloaded' });
    await model.chat({ ...request, model: 'claude-x' }).catch(() => undefined);
    const [span] = tracing.exporter.getFinishedSpans();
    expect(span?.name).toBe('chat claude-x');
    expect(span?.attributes['gen_ai.provider.name']).toBe('anthropic');
    expect(span?.attributes['error.type']).toBe('OVERLOADED');
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('records nothing with tracing: false', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-span', baseURL: openaiServer.url, tracing: false });
    await model.chat(request);
    expect(tracing.exporter.getFinishedSpans()).toEqual([]);
  });
});
