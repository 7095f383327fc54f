import { type FakeLlmServer, startFakeAnthropic, startFakeOpenAI } from '@infergate/testing';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from '../../../test/unit/otel-metrics.js';
import { createAnthropicChatModel } from './anthropic-chat-model.js';
import { createOpenAIChatModel } from './openai-chat-model.js';

let openaiServer: FakeLlmServer;
let anthropicServer: FakeLlmServer;
let tracing: ReturnType<typeof installInMemoryTracing>;
let meters: InMemoryMetrics;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  openaiServer = await startFakeOpenAI({ reply: 'one two three four five' });
  anthropicServer = await startFakeAnthropic({ cacheReadTokens: 7, cacheWriteTokens: 2 });
});
beforeEach(() => {
  meters = installInMemoryMetrics();
});
afterEach(async () => {
  await meters.uninstall();
  tracing.exporter.reset();
  openaiServer.setFault(undefined);
});
afterAll(async () => {
  tracing.uninstall();
  await openaiServer.stop();
  await anthropicServer.stop();
});

const messages = [{ role: 'user' as const, content: 'hello there' }];

function histogram(point: { value: unknown } | undefined): Histogram {
  return point?.value as Histogram;
}

describe('GenAI client metrics', () => {
  it('records duration and token usage by gen_ai.token.type for a chat call', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-m', baseURL: openaiServer.url });
    const answer = await model.chat({ model: 'gpt-4o-mini', messages });
    const collected = await meters.collect();
    const duration = collected.get('gen_ai.client.operation.duration');
    expect(duration?.descriptor.unit).toBe('s');
    expect(duration?.dataPoints).toHaveLength(1);
    expect(duration?.dataPoints[0]?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(openaiServer.url).port),
    });
    const tokens = collected.get('gen_ai.client.token.usage');
    expect(tokens?.descriptor.unit).toBe('{token}');
    const byType = new Map(
      tokens?.dataPoints.map((point) => [point.attributes['gen_ai.token.type'], histogram(point).sum]),
    );
    expect(byType).toEqual(
      new Map([
        ['input', answer.usage.inputTokens],
        ['output', answer.usage.outputTokens],
      ]),
    );
    // Not a stream: no chunk metrics.
    expect(collected.has('gen_ai.client.operation.time_to_first_chunk')).toBe(false);
  });

  it('records time to first chunk once and time per output chunk for every later chunk of a stream', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-m', baseURL: openaiServer.url });
    let deltas = 0;
    for await (const event of model.chatStream({ model: 'gpt-4o-mini', messages })) {
      if (event.type === 'text-delta') deltas += 1;
    }
    expect(deltas).toBeGreaterThan(1);
    const collected = await meters.collect();
    const first = collected.get('gen_ai.client.operation.time_to_first_chunk');
    const per = collected.get('gen_ai.client.operation.time_per_output_chunk');
    expect(first?.descriptor.unit).toBe('s');
    expect(histogram(first?.dataPoints[0]).count).toBe(1);
    expect(histogram(per?.dataPoints[0]).count).toBe(deltas - 1);
    expect(histogram(collected.get('gen_ai.client.operation.duration')?.dataPoints[0]).count).toBe(1);
  });

  it('puts error.type on the duration of a failed call and records no tokens', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-m', baseURL: openaiServer.url });
    openaiServer.setFault({ kind: 'server-error', status: 503 });
    await expect(model.chat({ model: 'gpt-4o-mini', messages })).rejects.toThrow();
    const collected = await meters.collect();
    expect(collected.get('gen_ai.client.operation.duration')?.dataPoints[0]?.attributes['error.type']).toBe(
      'UNAVAILABLE',
    );
    expect(collected.has('gen_ai.client.token.usage')).toBe(false);
  });

  it('records nothing with tracing: false', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-m', baseURL: openaiServer.url, tracing: false });
    await model.chat({ model: 'gpt-4o-mini', messages });
    expect((await meters.collect()).has('gen_ai.client.operation.duration')).toBe(false);
  });

  it('puts cache-read, cache-creation and reasoning tokens on the span when the provider states them', async () => {
    const model = createAnthropicChatModel({ apiKey: 'sk-ant', baseURL: anthropicServer.url });
    await model.chat({ model: 'claude-haiku-4-5', messages, maxTokens: 50 });
    const span = tracing.exporter.getFinishedSpans().find((each) => each.name === 'chat claude-haiku-4-5');
    expect(span?.attributes).toMatchObject({
      'gen_ai.usage.cache_read.input_tokens': 7,
      'gen_ai.usage.cache_creation.input_tokens': 2,
    });
    // Anthropic states no reasoning count: unknown is not 0.
    expect(span?.attributes['gen_ai.usage.reasoning.output_tokens']).toBeUndefined();
  });
});
