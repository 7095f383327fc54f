import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, ErrorCode, InfergateError, type TritonClient } from '@infergate/core';
import { CostTracker, withCost } from '@infergate/cost';
import { type ChatModel, createOpenAIChatModel, createTritonChatModel } from '@infergate/llm';
import { type ChatRouter, createChatRouter, type FallbackEvent } from '@infergate/router';
import { type FakeLlmServer, startFakeOpenAI, startTestServer, type TestServer } from '@infergate/testing';
import express from 'express';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ErrorLogEntry, type OpenAIRoutesOptions, openAIRoutes } from './index.js';

// The official `openai` client calls an Express app that serves openAIRoutes over a chat router:
// the fake OpenAI server first, then the reference server's `generate` model (a Triton-hosted LLM).
let triton: TestServer;
let upstream: FakeLlmServer;
let tritonClient: TritonClient;
let router: ChatRouter;
let costs: CostTracker;
let http: Server;
let baseURL: string;
const fallbacks: FallbackEvent[] = [];

beforeAll(async () => {
  triton = await startTestServer();
  upstream = await startFakeOpenAI({ chunkDelayMs: 10, cachedTokens: 3, reasoningTokens: 2 });
  tritonClient = createTritonClient({ url: triton.url, timeoutMs: 10_000 });
  costs = new CostTracker({
    budgets: [
      { id: 'per-tenant', scope: ['tenant'], window: 'day', hardLimitUsd: 10 },
      { id: 'broke', scope: ['tenant'], match: { tenant: 'broke' }, window: 'day', hardLimitUsd: 0 },
    ],
  });
  // Cost wraps each target (it prices by the target's provider and model), the router wraps those.
  const openai = createOpenAIChatModel({
    baseURL: upstream.url,
    apiKey: 'sk-upstream',
    defaultModel: 'gpt-4o-mini',
  });
  const generate = createTritonChatModel({
    client: tritonClient,
    model: 'generate',
    returnTokenCounts: true,
  });
  router = createChatRouter({
    retry: { maxRetries: 0 },
    targets: [
      { name: 'openai', model: withCost(openai, costs) },
      { name: 'triton', model: withCost(generate, costs) },
    ],
  });
  router.on('fallback', (event) => fallbacks.push(event));
  const app = express();
  app.use(
    openAIRoutes(router, {
      apiKeys: { 'sk-acme': 'acme', 'sk-broke': { tenant: 'broke', id: 'broke-key-1' } },
      models: ['gpt-4o-mini'],
    }),
  );
  http = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  baseURL = `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => http.close(resolve));
  router.close();
  await tritonClient.close();
  await upstream.close();
  await triton.stop();
});

beforeEach(() => {
  upstream.reset();
  fallbacks.length = 0;
});

const client = (apiKey = 'sk-acme') => new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 20_000 });
const hello = [{ role: 'user' as const, content: 'hello there' }];

describe('openAIRoutes with the official openai client', () => {
  it('answers a non-streaming completion in OpenAI’s shape and charges the key’s tenant', async () => {
    const before = (await costs.spend('per-tenant', { tenant: 'acme' })).spentUsd;
    const completion = await client().chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe('gpt-4o-mini');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'echo: hello there' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(2);
    expect(completion.usage?.total_tokens).toBe(
      (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0),
    );
    expect((await costs.spend('per-tenant', { tenant: 'acme' })).spentUsd).toBeGreaterThan(before);
    expect(upstream.calls).toBe(1);
  });

  it('streams chunks over SSE, with a last usage chunk for stream_options.include_usage', async () => {
    const stream = await client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'one two three four' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('echo: one two three four');
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toHaveLength(1);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 3 } });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
  });

  it('an abort by the caller cancels the call upstream', async () => {
    const controller = new AbortController();
    const words = Array.from({ length: 200 }, (_, index) => `w${index}`).join(' ');
    const stream = await client().chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }], stream: true },
      { signal: controller.signal },
    );
    let text = '';
    // The openai client ends the iteration quietly when its own signal aborts it.
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (text.split(' ').length >= 3) controller.abort();
    }
    expect(text.length).toBeLessThan(words.length);
    // The gateway saw the disconnect and cancelled its own request to the provider.
    await expect.poll(() => upstream.disconnects, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  });

  it('answers 429 insufficient_quota when the tenant’s budget is spent, without calling a provider', async () => {
    const failure = await client('sk-broke')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: hello })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    const error = failure as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error.status).toBe(429);
    expect(error.code).toBe('insufficient_quota');
    expect(error.type).toBe('insufficient_quota');
    expect(error.message).toContain('budget "broke"');
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const streamed = await client('sk-broke')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true })
      .catch((error: unknown) => error);
    expect(streamed).toBeInstanceOf(OpenAI.RateLimitError);
    expect(upstream.calls).toBe(0);
  });

  it('falls back to the Triton generate model when the provider fails before the first chunk', async () => {
    upstream.setFault({ kind: 'server-error', status: 503, times: 1 });
    const before = triton.stats('generate').requests;
    const stream = await client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'alpha beta gamma' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(upstream.faultHits).toBe(1);
    expect(fallbacks).toEqual([expect.objectContaining({ from: 'openai', to: 'triton' })]);
    expect(triton.stats('generate').requests).toBe(before + 1);
    expect(text).toContain('alpha beta gamma');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('a failure after the first chunk reaches the client as an error frame, which the client raises', async () => {
    upstream.setFault({ kind: 'stream-error', afterChunks: 2, times: 1 });
    const stream = await client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'one two three four five six' }],
      stream: true,
    });
    let text = '';
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toBe('echo: one two three four five six');
  });

  it('refuses what it cannot carry: n > 1 and tools, as 400 naming the parameter', async () => {
    const many = await client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: hello, n: 2 })
      .catch((error: unknown) => error);
    expect(many).toBeInstanceOf(OpenAI.BadRequestError);
    expect((many as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n');
    const tools = await client()
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: hello,
        tools: [{ type: 'function', function: { name: 'now', parameters: {} } }],
      })
      .catch((error: unknown) => error);
    expect((tools as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools');
    expect(upstream.calls).toBe(0);
  });

  it('lists and retrieves models; an unknown model is 404 model_not_found', async () => {
    const list = await client().models.list();
    expect(list.data.map((model) => model.id)).toEqual(['gpt-4o-mini']);
    expect(list.data[0]).toMatchObject({ object: 'model', owned_by: 'infergate' });
    expect(await client().models.retrieve('gpt-4o-mini')).toMatchObject({ id: 'gpt-4o-mini' });
    const missing = await client()
      .chat.completions.create({ model: 'gpt-5-imaginary', messages: hello })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('refuses an unknown API key (401) and a bad body (400 naming the parameter)', async () => {
    const unauthorized = await client('sk-nobody')
      .models.list()
      .catch((error: unknown) => error);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthorized as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
    const bad = await client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [] })
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
    expect(upstream.calls).toBe(0);
  });
});

describe('openAIRoutes: a 5xx’s own message stays on the server, as with errorHandler()', () => {
  const upstreamAddress = '10.1.2.3:8001';
  const broken: ChatModel = {
    provider: 'broken',
    defaultModel: 'm',
    chat: async () => {
      throw new InfergateError(ErrorCode.Internal, `backend ${upstreamAddress} dropped the call`, {
        endpoint: upstreamAddress,
      });
    },
    async *chatStream() {
      yield { type: 'text-delta', text: 'partial' };
      throw new InfergateError(ErrorCode.Internal, `backend ${upstreamAddress} died mid-stream`, {
        endpoint: upstreamAddress,
      });
    },
  };

  async function serve(options: OpenAIRoutesOptions): Promise<{ url: string; close: () => Promise<void> }> {
    const server = express().use(openAIRoutes(broken, options)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }

  it('answers a generic message naming the request id and logs the real one', async () => {
    const logged: ErrorLogEntry[] = [];
    const app = await serve({ logError: (entry) => logged.push(entry) });
    try {
      const openai = new OpenAI({ baseURL: app.url, apiKey: 'none', maxRetries: 0 });
      const failure = await openai.chat.completions
        .create({ model: 'm', messages: hello })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(OpenAI.InternalServerError);
      const message = (failure as InstanceType<typeof OpenAI.InternalServerError>).message;
      expect(message).not.toContain(upstreamAddress);
      expect(logged).toHaveLength(1);
      expect(message).toContain(logged[0]?.requestId);
      expect(logged[0]).toMatchObject({ status: 500, code: 'INTERNAL' });
      expect(logged[0]?.message).toContain(upstreamAddress);

      const stream = await openai.chat.completions.create({ model: 'm', messages: hello, stream: true });
      const midStream = await (async () => {
        for await (const chunk of stream) void chunk;
      })().catch((error: unknown) => error);
      expect(midStream).toBeInstanceOf(OpenAI.APIError);
      expect(String((midStream as Error).message)).not.toContain(upstreamAddress);
      expect(logged).toHaveLength(2);
      expect(logged[1]?.message).toContain('mid-stream');
    } finally {
      await app.close();
    }
  });

  it('exposeInternalErrors: true sends the message, with the upstream address removed', async () => {
    const app = await serve({ exposeInternalErrors: true, logError: () => {} });
    try {
      const openai = new OpenAI({ baseURL: app.url, apiKey: 'none', maxRetries: 0 });
      const failure = await openai.chat.completions
        .create({ model: 'm', messages: hello })
        .catch((error: unknown) => error);
      const message = (failure as InstanceType<typeof OpenAI.InternalServerError>).message;
      expect(message).toContain('dropped the call');
      expect(message).not.toContain(upstreamAddress);
    } finally {
      await app.close();
    }
  });
});
