import { ErrorCode, InfergateError, type InferResponse, type InferTransport } from '@infergate/core';
import type { ChatModel, ChatStreamEvent } from '@infergate/llm';
import { trace } from '@opentelemetry/api';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { inMemoryTelemetryPerTest } from '../../../test/unit/otel-metrics.js';
import { createChatRouter } from './chat-router.js';
import { createInferRouter } from './infer-router.js';

/** An in-memory transport: fails with `code` while set, and opens a span of its own per call. */
function memoryTransport(state: { code?: ErrorCode }): InferTransport {
  return {
    async infer(request) {
      trace.getTracer('test').startSpan('transport call').end();
      if (state.code !== undefined) throw new InfergateError(state.code, 'refused');
      return {
        model: request.model,
        modelVersion: '1',
        id: '',
        outputs: [],
        parameters: {},
      } satisfies InferResponse;
    },
    stream() {
      throw new Error('unused');
    },
  };
}

/** A ChatModel that answers at once; streams three words. */
function memoryChat(state: { fail: boolean }): ChatModel {
  const usage = {
    inputTokens: 2,
    outputTokens: 3,
    cacheReadTokens: undefined,
    cacheWriteTokens: undefined,
    reasoningTokens: undefined,
    raw: {},
  };
  return {
    provider: 'memory',
    async chat(request) {
      if (state.fail) throw new InfergateError(ErrorCode.Unavailable, 'down');
      return {
        id: 'x',
        model: request.model,
        text: 'a b c',
        finishReason: 'stop',
        rawFinishReason: 'stop',
        usage,
        provider: 'memory',
      };
    },
    async *chatStream(request): AsyncGenerator<ChatStreamEvent> {
      if (state.fail) throw new InfergateError(ErrorCode.Unavailable, 'down');
      for (const word of ['a ', 'b ', 'c']) yield { type: 'text-delta', text: word };
      yield { type: 'usage', usage };
      yield { type: 'finish', finishReason: 'stop', rawFinishReason: 'stop', id: 'x', model: request.model };
    },
  };
}

const telemetry = inMemoryTelemetryPerTest();

describe('router metrics', () => {
  it('counts attempts by outcome and fallbacks by reason, and runs each attempt under its span', async () => {
    const router = createInferRouter({
      name: 'metrics',
      // Long enough that the busy target is still cooling when the gauge is read.
      firstCooldownMs: 60_000,
      cooldownMs: 60_000,
      targets: [
        { name: 'busy', transport: memoryTransport({ code: ErrorCode.ResourceExhausted }) },
        { name: 'ok', transport: memoryTransport({}) },
      ],
    });
    await router.infer({ model: 'm', inputs: [] });
    const attempts = await telemetry.meters.points('infergate.router.attempts');
    expect(
      attempts.map((point) => [
        point.attributes['infergate.target'],
        point.attributes['infergate.outcome'],
        point.value,
      ]),
    ).toEqual([
      ['busy', 'backpressure', 1],
      ['ok', 'success', 1],
    ]);
    const fallbacks = await telemetry.meters.points('infergate.router.fallbacks');
    expect(fallbacks.map((point) => point.attributes)).toEqual([
      {
        'infergate.router': 'metrics',
        'infergate.fallback.from': 'busy',
        'infergate.fallback.to': 'ok',
        'infergate.fallback.reason': 'backpressure',
      },
    ]);
    const cooling = await telemetry.meters.points('infergate.router.target.cooling');
    expect(
      Object.fromEntries(cooling.map((point) => [point.attributes['infergate.target'], point.value])),
    ).toEqual({
      busy: 1,
      ok: 0,
    });
    const spans = telemetry.tracing.exporter.getFinishedSpans();
    const attemptSpans = spans.filter((span) => span.name === 'infergate.router.attempt');
    const calls = spans.filter((span) => span.name === 'transport call');
    expect(calls.map((span) => span.parentSpanContext?.spanId)).toEqual(
      attemptSpans.map((span) => span.spanContext().spanId),
    );
    await router.close();
  });

  it('records nothing, and opens no span, with tracing: false', async () => {
    const router = createInferRouter({
      tracing: false,
      targets: [{ name: 'ok', transport: memoryTransport({}) }],
    });
    await router.infer({ model: 'm', inputs: [] });
    expect(await telemetry.meters.points('infergate.router.attempts')).toEqual([]);
    expect(telemetry.tracing.exporter.getFinishedSpans().map((span) => span.name)).toEqual([
      'transport call',
    ]);
    await router.close();
  });

  it('records the chat router’s own GenAI duration and chunk timings, fallbacks included, without tokens', async () => {
    const router = createChatRouter({
      name: 'chat',
      targets: [
        { name: 'down', model: memoryChat({ fail: true }) },
        { name: 'up', model: memoryChat({ fail: false }) },
      ],
    });
    await router.chat({ model: 'small', messages: [{ role: 'user', content: 'hi' }] });
    for await (const _event of router.chatStream({
      model: 'small',
      messages: [{ role: 'user', content: 'hi' }],
    })) {
      // drain
    }
    const collected = await telemetry.meters.collect();
    const duration = collected.get('gen_ai.client.operation.duration');
    expect(duration?.dataPoints).toHaveLength(1);
    expect(duration?.dataPoints[0]?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'router',
      'gen_ai.request.model': 'small',
      'gen_ai.response.model': 'small',
      'infergate.router': 'chat',
    });
    expect((duration?.dataPoints[0]?.value as Histogram | undefined)?.count).toBe(2);
    expect(
      (
        collected.get('gen_ai.client.operation.time_to_first_chunk')?.dataPoints[0]?.value as
          | Histogram
          | undefined
      )?.count,
    ).toBe(1);
    expect(
      (
        collected.get('gen_ai.client.operation.time_per_output_chunk')?.dataPoints[0]?.value as
          | Histogram
          | undefined
      )?.count,
    ).toBe(2);
    expect(collected.has('gen_ai.client.token.usage')).toBe(false);
    await router.close();
  });
});
