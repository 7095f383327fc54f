import { createTritonClient, InfergateError, type TritonClient } from '@infergate/core';
import { CostTracker, withCost } from '@infergate/cost';
import { createAnthropicChatModel, createOpenAIChatModel, createTritonChatModel } from '@infergate/llm';
import { createChatRouter, type FallbackEvent } from '@infergate/router';
import {
  type FakeLlmServer,
  startFakeAnthropic,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { createInfergate } from './index.js';

// The real `ai` package drives the provider against the reference server's `generate` model and
// the fake OpenAI and Anthropic servers.
let triton: TestServer;
let openaiServer: FakeLlmServer;
let anthropicServer: FakeLlmServer;
let tritonClient: TritonClient;

beforeAll(async () => {
  triton = await startTestServer();
  openaiServer = await startFakeOpenAI({ chunkDelayMs: 10, cachedTokens: 4, reasoningTokens: 3 });
  anthropicServer = await startFakeAnthropic({ cacheReadTokens: 5, cacheWriteTokens: 7 });
  tritonClient = createTritonClient({ url: triton.url, timeoutMs: 10_000 });
});

afterAll(async () => {
  await tritonClient.close();
  await openaiServer.close();
  await anthropicServer.close();
  await triton.stop();
});

beforeEach(() => {
  openaiServer.reset();
  anthropicServer.reset();
});

const generate = () =>
  createTritonChatModel({ client: tritonClient, model: 'generate', returnTokenCounts: true });
const openai = () =>
  createOpenAIChatModel({ baseURL: openaiServer.url, apiKey: 'sk-test', defaultModel: 'gpt-4o-mini' });

describe('generateText and streamText with the infergate provider', () => {
  it('generateText against the reference server’s generate model (Triton)', async () => {
    const infergate = createInfergate({ model: generate() });
    const before = triton.stats('generate').requests;
    const result = await generateText({
      model: infergate('generate'),
      prompt: 'red green blue',
      maxRetries: 0,
    });
    expect(result.text).toContain('red green blue');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(triton.stats('generate').requests).toBe(before + 1);
    expect(result.providerMetadata?.infergate).toEqual({ answeredBy: 'triton' });
  });

  it('streamText against the generate model: text arrives in deltas, usage at the end', async () => {
    const infergate = createInfergate({ model: generate() });
    const result = streamText({
      model: infergate('generate'),
      prompt: 'one two three four five',
      maxRetries: 0,
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toContain('one two three four five');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    expect(await result.finishReason).toBe('stop');
  });

  it('maps OpenAI usage to the AI SDK’s shape, cache reads and reasoning tokens included', async () => {
    const infergate = createInfergate({ model: openai() });
    const result = await generateText({
      model: infergate('gpt-4o-mini'),
      prompt: 'hello world',
      maxRetries: 0,
    });
    expect(result.text).toBe('echo: hello world');
    const { usage } = result;
    expect(usage.inputTokenDetails.cacheReadTokens).toBe(4);
    expect(usage.inputTokenDetails.noCacheTokens).toBe((usage.inputTokens ?? 0) - 4);
    expect(usage.outputTokenDetails.reasoningTokens).toBe(3);
    expect(usage.outputTokenDetails.textTokens).toBe((usage.outputTokens ?? 0) - 3);
    const streamed = streamText({ model: infergate('gpt-4o-mini'), prompt: 'hello stream', maxRetries: 0 });
    expect(await streamed.text).toBe('echo: hello stream');
    expect((await streamed.usage).inputTokenDetails.cacheReadTokens).toBe(4);
  });

  it('maps Anthropic cache writes, and system messages reach the provider', async () => {
    const infergate = createInfergate({
      model: createAnthropicChatModel({
        baseURL: anthropicServer.url,
        apiKey: 'sk-ant',
        defaultModel: 'claude-sonnet-4-5',
      }),
    });
    const result = await generateText({
      model: infergate('claude-sonnet-4-5'),
      system: 'be brief',
      prompt: 'cache me',
      maxRetries: 0,
    });
    expect(result.text).toBe('echo: cache me');
    expect(result.usage.inputTokenDetails).toMatchObject({ cacheReadTokens: 5, cacheWriteTokens: 7 });
    expect(result.usage.inputTokenDetails.noCacheTokens).toBe((result.usage.inputTokens ?? 0) - 12);
    expect(anthropicServer.requests[0]?.body).toMatchObject({ system: 'be brief' });
  });

  it('a chat router falls back from the provider to Triton before the first chunk', async () => {
    const router = createChatRouter({
      retry: { maxRetries: 0 },
      targets: [
        { name: 'openai', model: openai() },
        { name: 'triton', model: generate() },
      ],
    });
    const fallbacks: FallbackEvent[] = [];
    router.on('fallback', (event) => fallbacks.push(event));
    try {
      openaiServer.setFault({ kind: 'server-error', status: 503, times: 1 });
      const infergate = createInfergate({ model: router });
      const result = streamText({ model: infergate('chat'), prompt: 'fallback works', maxRetries: 0 });
      expect(await result.text).toContain('fallback works');
      expect(openaiServer.faultHits).toBe(1);
      expect(fallbacks).toEqual([expect.objectContaining({ from: 'openai', to: 'triton' })]);
    } finally {
      router.close();
    }
  });

  it('budgets: the tenant from providerOptions is charged, and a spent budget refuses the call', async () => {
    const costs = new CostTracker({
      budgets: [
        { id: 'per-tenant', scope: ['tenant'], window: 'day', hardLimitUsd: 10 },
        { id: 'broke', scope: ['tenant'], match: { tenant: 'broke' }, window: 'day', hardLimitUsd: 0 },
      ],
    });
    const infergate = createInfergate({ model: withCost(openai(), costs), tenant: 'acme' });
    await generateText({ model: infergate('gpt-4o-mini'), prompt: 'charge me', maxRetries: 0 });
    expect((await costs.spend('per-tenant', { tenant: 'acme' })).spentUsd).toBeGreaterThan(0);
    const refused = await generateText({
      model: infergate('gpt-4o-mini'),
      prompt: 'no money',
      maxRetries: 0,
      providerOptions: { infergate: { tenant: 'broke' } },
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InfergateError);
    expect((refused as InfergateError).code).toBe('BUDGET_EXCEEDED');
    expect(openaiServer.calls).toBe(1);
  });

  it('an abort of streamText cancels the provider request', async () => {
    const infergate = createInfergate({ model: openai() });
    const controller = new AbortController();
    const words = Array.from({ length: 200 }, (_, index) => `w${index}`).join(' ');
    const result = streamText({
      model: infergate('gpt-4o-mini'),
      prompt: words,
      abortSignal: controller.signal,
      maxRetries: 0,
      onError: () => {},
    });
    let text = '';
    for await (const delta of result.textStream) {
      text += delta;
      if (text.split(' ').length >= 3) controller.abort();
    }
    expect(text.length).toBeLessThan(words.length);
    await expect.poll(() => openaiServer.disconnects, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  });

  it('the adapter’s OpenTelemetry chat span is recorded for an AI SDK call', async () => {
    const tracing = installInMemoryTracing();
    try {
      const infergate = createInfergate({ model: openai() });
      await generateText({ model: infergate('gpt-4o-mini'), prompt: 'trace me', maxRetries: 0 });
      const span = tracing.exporter
        .getFinishedSpans()
        .find((candidate) => candidate.name === 'chat gpt-4o-mini');
      expect(span?.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.usage.input_tokens': 6,
      });
    } finally {
      tracing.uninstall();
    }
  });

  it('refuses what it cannot carry: files, and models other than language models', async () => {
    const infergate = createInfergate({ model: openai() });
    const refused = await generateText({
      model: infergate('gpt-4o-mini'),
      messages: [
        { role: 'user', content: [{ type: 'file', data: new Uint8Array([1]), mediaType: 'image/png' }] },
      ],
      maxRetries: 0,
    }).catch((error: unknown) => error);
    expect((refused as InfergateError).code).toBe('INVALID_ARGUMENT');
    expect(openaiServer.calls).toBe(0);
    expect(() => infergate.embeddingModel('text-embedding-3-small')).toThrow(/language models only/);
    expect(() => createInfergate({ model: {} as never })).toThrow(/must be an infergate ChatModel/);
  });
});
