import type { AddressInfo } from 'node:net';
import { createMicroBatcher } from '@infergate/batcher';
import { applyInterceptors, createGrpcTransport, createTritonClient } from '@infergate/core';
import { costInterceptor, createCostTracker } from '@infergate/cost';
import { contextOf, type Gateway, infergate } from '@infergate/express';
import { createAnthropicChatModel, createOpenAIChatModel } from '@infergate/llm';
import { createChatRouter, createInferRouter } from '@infergate/router';
import {
  type FakeLlmServer,
  startFakeAnthropic,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from './otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from './otel-metrics.js';

/**
 * One Express request through everything that traces: the middleware's server span and budget
 * check, the chat router (a failed attempt, then a fallback), a Triton call through router → cost
 * → batcher → gRPC to the reference server, and a streamed chat. The whole tree, its links and
 * the metric points it left are asserted. docs/concepts/tracing.md shows this trace.
 */

let triton: TestServer;
let openai: FakeLlmServer;
let anthropic: FakeLlmServer;
let tracing: ReturnType<typeof installInMemoryTracing>;
let meters: InMemoryMetrics;
let closeAll: () => Promise<void>;
let baseUrl: string;

beforeAll(async () => {
  tracing = installInMemoryTracing();
  meters = installInMemoryMetrics();
  triton = await startTestServer({ simulatedGpu: { baseMs: 1, perRowMs: 0 } });
  openai = await startFakeOpenAI({ reply: 'one two three' });
  anthropic = await startFakeAnthropic({ reply: 'four five' });

  const tracker = createCostTracker({
    budgets: [{ id: 'daily', scope: ['tenant'], window: 'day', hardLimitUsd: 10 }],
    gpuPrices: [{ model: 'simulated_gpu', usdPerGpuHour: 3600 }],
  });
  const grpc = createGrpcTransport({ url: triton.url });
  const batcher = createMicroBatcher(grpc, { models: { simulated_gpu: { maxBatchSize: 8 } } });
  const tritonRouter = createInferRouter({
    name: 'triton',
    targets: [{ name: 'triton-a', transport: applyInterceptors(batcher, [costInterceptor({ tracker })]) }],
  });
  const client = createTritonClient({ transport: tritonRouter });
  const chatRouter = createChatRouter({
    name: 'chat',
    targets: [
      { name: 'openai', model: createOpenAIChatModel({ apiKey: 'sk-tree', baseURL: openai.url }) },
      {
        name: 'anthropic',
        model: createAnthropicChatModel({ apiKey: 'sk-ant-tree', baseURL: anthropic.url }),
        modelName: 'claude-haiku-4-5',
      },
    ],
  });
  const gateway: Gateway = { triton: client, chat: chatRouter };
  const app = express();
  app.post(
    '/v1/answer',
    infergate({
      gateway,
      budget: async ({ tenant }) => {
        const reservation = await tracker.reserve({ tenant, estimateUsd: 0.01 });
        return () => tracker.release(reservation);
      },
    }),
    async (request, response, next) => {
      try {
        const { signal, tenant } = contextOf(request);
        const messages = [{ role: 'user' as const, content: 'hello' }];
        const answer = await chatRouter.chat({ model: 'gpt-4o-mini', messages }, { signal, tenant });
        const result = await client.infer(
          'simulated_gpu',
          [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: new Float32Array([1, 2]) }],
          { signal, tenant },
        );
        let streamed = '';
        for await (const event of chatRouter.chatStream(
          { model: 'gpt-4o-mini', messages },
          { signal, tenant },
        ))
          if (event.type === 'text-delta') streamed += event.text;
        response.json({
          answer: answer.text,
          doubled: Array.from(result.output('OUTPUT0').data as Float32Array),
          streamed,
        });
      } catch (error) {
        next(error);
      }
    },
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closeAll = async () => {
    await new Promise((resolve) => server.close(resolve));
    await chatRouter.close();
    await tritonRouter.close();
    await batcher.close();
    await grpc.close();
    await tracker.close();
  };
});

afterAll(async () => {
  await closeAll();
  await Promise.all([triton.stop(), openai.stop(), anthropic.stop()]);
  await meters.uninstall();
  tracing.uninstall();
});

function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans
    .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
    .sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
}

/** The tree under `root` as text: one line per span, its kind and the attributes that identify it. */
function render(spans: readonly ReadableSpan[], root: ReadableSpan): string[] {
  const label = (span: ReadableSpan) => {
    const who = ['infergate.router', 'infergate.target', 'infergate.outcome']
      .map((key) => span.attributes[key])
      .filter((value) => value !== undefined);
    const links = span.links.length > 0 ? ` (${span.links.length} link)` : '';
    return `${span.name} [${SpanKind[span.kind]}]${who.length > 0 ? ` ${who.join(' ')}` : ''}${links}`;
  };
  const lines = [label(root)];
  const walk = (parent: ReadableSpan, indent: string) => {
    const children = childrenOf(spans, parent);
    children.forEach((child, index) => {
      const last = index === children.length - 1;
      lines.push(`${indent}${last ? '└─ ' : '├─ '}${label(child)}`);
      walk(child, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  walk(root, '');
  return lines;
}

function sumOf(points: DataPoint<unknown>[], match: Record<string, unknown>): number {
  let total = 0;
  for (const point of points) {
    if (!Object.entries(match).every(([key, value]) => point.attributes[key] === value)) continue;
    const value = point.value;
    total += typeof value === 'number' ? value : (value as Histogram).count;
  }
  return total;
}

describe('the trace of one Express request', () => {
  it('has the whole tree: server span, budget, chat attempts with a fallback, router → cost → batch → RPC, a stream', async () => {
    openai.setFault({ kind: 'server-error', status: 503, times: 1 });
    const caller = trace.getTracer('test').startSpan('caller', { kind: SpanKind.CLIENT });
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-tenant-id': 'acme' };
    propagation.inject(trace.setSpan(context.active(), caller), headers);
    const response = await fetch(`${baseUrl}/v1/answer`, { method: 'POST', headers, body: '{}' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      answer: 'four five',
      doubled: [2, 4],
      streamed: 'one two three',
    });
    caller.end();

    // The server span ends when the response has finished, which may be after the client read it.
    await expect
      .poll(() => tracing.exporter.getFinishedSpans().some((span) => span.kind === SpanKind.SERVER))
      .toBe(true);
    const spans = tracing.exporter.getFinishedSpans();
    for (const span of spans) expect(span.spanContext().traceId).toBe(caller.spanContext().traceId);

    const server = spans.find((span) => span.kind === SpanKind.SERVER) as ReadableSpan;
    expect(server.name).toBe('POST /v1/answer');
    expect(server.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/answer',
      'http.response.status_code': 200,
    });

    expect(render(spans, server)).toEqual([
      'POST /v1/answer [SERVER]',
      '├─ infergate.budget [INTERNAL]',
      '├─ infergate.router.attempt [INTERNAL] chat openai failure',
      '│  └─ chat gpt-4o-mini [CLIENT]',
      '├─ infergate.router.attempt [INTERNAL] chat anthropic success',
      '│  └─ chat claude-haiku-4-5 [CLIENT]',
      '├─ infergate.router.attempt [INTERNAL] triton triton-a success',
      '│  └─ batch simulated_gpu [INTERNAL] (1 link)',
      '│     └─ inference.GRPCInferenceService/ModelInfer [CLIENT]',
      '└─ infergate.router.attempt [INTERNAL] chat openai success',
      '   └─ chat gpt-4o-mini [CLIENT]',
    ]);
    const top = childrenOf(spans, server);
    expect(
      top.map((span) => [
        span.name,
        span.attributes['infergate.router'],
        span.attributes['infergate.target'],
        span.attributes['infergate.outcome'],
      ]),
    ).toEqual([
      ['infergate.budget', undefined, undefined, undefined],
      ['infergate.router.attempt', 'chat', 'openai', 'failure'],
      ['infergate.router.attempt', 'chat', 'anthropic', 'success'],
      ['infergate.router.attempt', 'triton', 'triton-a', 'success'],
      ['infergate.router.attempt', 'chat', 'openai', 'success'],
    ]);
    const [budget, failed, fallback, tritonAttempt, streamAttempt] = top as [
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
    ];
    expect(budget.attributes['infergate.tenant']).toBe('acme');
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes['infergate.error_code']).toBe('UNAVAILABLE');

    // Each chat attempt holds its GenAI CLIENT span.
    const [failedChat] = childrenOf(spans, failed);
    expect(failedChat?.name).toBe('chat gpt-4o-mini');
    expect(failedChat?.kind).toBe(SpanKind.CLIENT);
    expect(failedChat?.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'error.type': 'UNAVAILABLE',
    });
    const [fallbackChat] = childrenOf(spans, fallback);
    expect(fallbackChat?.name).toBe('chat claude-haiku-4-5');
    expect(fallbackChat?.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': 2,
    });
    // The fake providers saw the trace: each request's traceparent names its own GenAI span.
    expect(anthropic.requests.at(-1)?.headers.traceparent).toContain(fallbackChat?.spanContext().spanId);

    // Triton: the attempt carries the call's GPU cost; its batch span (linked to the attempt) holds the RPC.
    expect(tritonAttempt.attributes['infergate.cost.usd']).toBeGreaterThan(0);
    expect(tritonAttempt.attributes['infergate.tenant']).toBe('acme');
    const batch = spans.find((span) => span.name === 'batch simulated_gpu') as ReadableSpan;
    expect(batch.attributes).toMatchObject({ 'infergate.batch.items': 1, 'infergate.batch.rows': 1 });
    expect(batch.links.map((link) => link.context.spanId)).toEqual([tritonAttempt.spanContext().spanId]);
    expect(batch.parentSpanContext?.spanId).toBe(tritonAttempt.spanContext().spanId);
    const [rpc] = childrenOf(spans, batch);
    expect(rpc?.name).toBe('inference.GRPCInferenceService/ModelInfer');
    expect(rpc?.kind).toBe(SpanKind.CLIENT);
    expect(rpc?.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.grpc.status_code': 0,
      'server.port': triton.port,
    });
    const traceparent = triton.calls.filter((call) => call.method === 'ModelInfer').at(-1)
      ?.metadata.traceparent;
    expect(traceparent).toContain(rpc?.spanContext().spanId);

    // The stream: one attempt, one GenAI span that saw every chunk.
    const [streamChat] = childrenOf(spans, streamAttempt);
    expect(streamChat?.name).toBe('chat gpt-4o-mini');
    expect(streamChat?.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(streamChat?.attributes['gen_ai.usage.output_tokens']).toBe(3);

    // Nothing else: every span of the request is in the tree above.
    const inTree = new Set(
      [server, ...top, failedChat, fallbackChat, batch, rpc, streamChat].map(
        (span) => span?.spanContext().spanId,
      ),
    );
    expect(
      spans
        .filter(
          (span) => span !== undefined && span.name !== 'caller' && !inTree.has(span.spanContext().spanId),
        )
        .map((span) => span.name),
    ).toEqual([]);

    // The metric points this request left.
    const collected = await meters.collect();
    const points = (name: string) => (collected.get(name)?.dataPoints ?? []) as DataPoint<unknown>[];
    expect(
      sumOf(points('infergate.express.requests'), {
        'http.route': '/v1/answer',
        'http.response.status_code': 200,
      }),
    ).toBe(1);
    expect(
      sumOf(points('infergate.router.attempts'), {
        'infergate.router': 'chat',
        'infergate.outcome': 'failure',
      }),
    ).toBe(1);
    expect(
      sumOf(points('infergate.router.attempts'), {
        'infergate.router': 'chat',
        'infergate.outcome': 'success',
      }),
    ).toBe(2);
    expect(
      sumOf(points('infergate.router.fallbacks'), {
        'infergate.fallback.from': 'openai',
        'infergate.fallback.to': 'anthropic',
      }),
    ).toBe(1);
    const duration = points('gen_ai.client.operation.duration');
    expect(sumOf(duration, { 'gen_ai.provider.name': 'openai', 'error.type': 'UNAVAILABLE' })).toBe(1);
    expect(sumOf(duration, { 'gen_ai.provider.name': 'anthropic' })).toBe(1);
    expect(sumOf(duration, { 'gen_ai.provider.name': 'router', 'infergate.router': 'chat' })).toBe(2);
    expect(sumOf(points('gen_ai.client.token.usage'), { 'gen_ai.token.type': 'output' })).toBe(2);
    expect(
      sumOf(points('gen_ai.client.operation.time_to_first_chunk'), { 'gen_ai.provider.name': 'openai' }),
    ).toBe(1);
    expect(
      sumOf(points('gen_ai.client.operation.time_per_output_chunk'), { 'gen_ai.provider.name': 'openai' }),
    ).toBeGreaterThan(0);
    expect(
      sumOf(points('rpc.client.duration'), { 'rpc.method': 'ModelInfer', 'rpc.grpc.status_code': 0 }),
    ).toBe(1);
    expect(sumOf(points('infergate.batcher.batch.size'), { 'infergate.model': 'simulated_gpu' })).toBe(1);
    expect(
      sumOf(points('infergate.cost.spent'), { 'gen_ai.request.model': 'simulated_gpu' }),
    ).toBeGreaterThan(0);
    expect(
      points('infergate.cost.budget.remaining').map((point) => point.attributes['infergate.budget']),
    ).toEqual(['daily']);
  });
});
