import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, InfergateError, type TritonClient } from '@infergate/core';
import { type ChatModel, createOpenAIChatModel } from '@infergate/llm';
import { type FakeLlmServer, startFakeOpenAI, startTestServer, type TestServer } from '@infergate/testing';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatHandler, errorHandler, type Gateway, infergate, kserveInferHandler } from './index.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON checked field by field below
type Json = any;

let triton: TestServer;
let fakeOpenAI: FakeLlmServer;
let client: TritonClient;
let chat: ChatModel;
let http: Server;
let base: string;
let gatewayFactoryCalls = 0;
const budgetCalls: string[] = [];
let released = 0;

beforeAll(async () => {
  triton = await startTestServer();
  fakeOpenAI = await startFakeOpenAI({ chunkDelayMs: 20 });
  client = createTritonClient({ url: triton.url, timeoutMs: 5000 });
  chat = createOpenAIChatModel({ baseURL: fakeOpenAI.url, apiKey: 'sk-test', defaultModel: 'gpt-4o-mini' });
  const app = express();
  app.use(express.json({ limit: '8mb' }));
  app.use(
    infergate<Gateway>({
      gateway: () => {
        gatewayFactoryCalls++;
        return { triton: client, chat };
      },
      tenant: { header: 'x-tenant-id' },
      budget: async ({ tenant }) => {
        budgetCalls.push(tenant);
        if (tenant === 'broke') {
          throw new InfergateError('BUDGET_EXCEEDED', 'daily budget of tenant broke is spent', {
            retryAfterMs: 90_500,
          });
        }
        return () => {
          released++;
        };
      },
    }),
  );
  app.post('/v2/models/:model/infer', kserveInferHandler());
  app.post('/v2/models/:model/versions/:version/infer', kserveInferHandler());
  app.post('/chat', chatHandler());
  app.get('/boom', () => {
    throw new InfergateError('BREAKER_OPEN', 'every target is open', { retryAfterMs: 2500 });
  });
  app.use(errorHandler());
  const keyed = express();
  keyed.use(
    infergate({
      gateway: { triton: client },
      tenant: { apiKeys: { 'key-a': 'team-a', 'key-broke': 'team-broke' } },
      budgetExceededStatus: 402,
      budget: async ({ tenant }) => {
        if (tenant === 'team-broke')
          throw new InfergateError('BUDGET_EXCEEDED', 'spent', { retryAfterMs: 1000 });
      },
    }),
  );
  keyed.get('/whoami', (request, response) => {
    response.json({ tenant: (request as unknown as { infergate: { tenant: string } }).infergate.tenant });
  });
  app.use('/keyed', keyed);
  http = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => http.close(resolve));
  await client.close();
  await triton.stop();
  await fakeOpenAI.close();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tenant-id': 'acme', ...headers },
    body: JSON.stringify(body),
  });
}

const addSub = {
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'FP32', data: [Array.from({ length: 16 }, (_, i) => i)] },
    { name: 'INPUT1', shape: [1, 16], datatype: 'FP32', data: new Array(16).fill(1) },
  ],
};

describe('KServe v2 REST handler', () => {
  it('forwards a JSON inference through the gateway and answers in KServe JSON', async () => {
    const response = await post('/v2/models/add_sub/infer', { id: 'r-1', ...addSub });
    expect(response.status).toBe(200);
    const body: Json = await response.json();
    expect(body.model_name).toBe('add_sub');
    expect(body.id).toBe('r-1');
    const sum = body.outputs.find((output: { name: string }) => output.name === 'OUTPUT0');
    expect(sum).toMatchObject({ datatype: 'FP32', shape: [1, 16] });
    expect(sum.data.slice(0, 3)).toEqual([1, 2, 3]);
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('handles BYTES, INT64, versions and requested outputs', async () => {
    const bytes = await post('/v2/models/identity/versions/1/infer', {
      inputs: [{ name: 'INPUT0', shape: [2], datatype: 'BYTES', data: ['héllo', ''] }],
    });
    expect(((await bytes.json()) as Json).outputs[0].data).toEqual(['héllo', '']);
    const longs = await post('/v2/models/identity/infer', {
      inputs: [{ name: 'INPUT0', shape: [2], datatype: 'INT64', data: [5, -7] }],
      outputs: [{ name: 'OUTPUT0' }],
    });
    expect(((await longs.json()) as Json).outputs[0].data).toEqual([5, -7]);
  });

  it('maps errors to HTTP with a JSON body carrying the code and request id', async () => {
    const bad = await post('/v2/models/add_sub/infer', {
      inputs: [{ name: 'INPUT0', shape: [1, 16], datatype: 'FP33', data: [] }],
    });
    expect(bad.status).toBe(400);
    const badBody: Json = await bad.json();
    expect(badBody.error.code).toBe('INVALID_ARGUMENT');
    expect(badBody.error.requestId).toBe(bad.headers.get('x-request-id'));
    const shape = await post('/v2/models/add_sub/infer', {
      inputs: [{ name: 'INPUT0', shape: [1, 16], datatype: 'FP32', data: [1, 2] }],
    });
    expect(shape.status).toBe(400);
    const missing = await post('/v2/models/nope/infer', addSub);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).error.code).toBe('NOT_FOUND');
    triton.faults.set('add_sub', { code: 'UNAVAILABLE', message: 'Exceeds maximum queue size', times: 1 });
    const full = await post('/v2/models/add_sub/infer', addSub);
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('1');
    expect(((await full.json()) as Json).error).toMatchObject({ code: 'QUEUE_FULL', retryable: true });
    const slow = await post('/v2/models/fail/infer', {
      parameters: { fail_code: 0, delay_ms: 8000 },
      inputs: [{ name: 'INPUT0', shape: [1], datatype: 'FP32', data: [1] }],
    });
    expect(slow.status).toBe(504);
    const open = await fetch(`${base}/boom`, { headers: { 'x-tenant-id': 'acme' } });
    expect(open.status).toBe(503);
    expect(open.headers.get('retry-after')).toBe('3');
  }, 20_000);

  it('reads the body itself when no body parser ran, and rejects bad JSON', async () => {
    const raw = express();
    raw.use(infergate({ gateway: { triton: client } }));
    raw.post('/v2/models/:model/infer', kserveInferHandler({ limitBytes: 1024 }));
    const server = raw.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/models/identity/infer`;
    try {
      const ok = await fetch(url, {
        method: 'POST',
        body: JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1], datatype: 'INT8', data: [3] }] }),
      });
      expect(((await ok.json()) as Json).outputs[0].data).toEqual([3]);
      const broken = await fetch(url, { method: 'POST', body: '{"inputs": [' });
      expect(broken.status).toBe(400);
      const huge = await fetch(url, {
        method: 'POST',
        body: JSON.stringify({ inputs: [], pad: 'x'.repeat(4096) }),
      });
      expect(huge.status).toBe(413);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a client that disconnects cancels the inference on the server', async () => {
    const before = triton.cancellations('fail');
    const controller = new AbortController();
    const pending = post(
      '/v2/models/fail/infer',
      {
        parameters: { fail_code: 0, delay_ms: 5000 },
        inputs: [{ name: 'INPUT0', shape: [1], datatype: 'FP32', data: [1] }],
      },
      {},
    ).catch(() => undefined);
    void fetch(`${base}/v2/models/fail/infer`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', 'x-tenant-id': 'acme' },
      body: JSON.stringify({
        parameters: { fail_code: 0, delay_ms: 5000 },
        inputs: [{ name: 'INPUT0', shape: [1], datatype: 'FP32', data: [1] }],
      }),
    }).catch(() => undefined);
    await expect.poll(() => triton.stats('fail').inFlight).toBeGreaterThanOrEqual(2);
    controller.abort();
    await expect.poll(() => triton.cancellations('fail')).toBe(before + 1);
    await pending;
  }, 15_000);
});

describe('middleware', () => {
  it('creates the gateway once, lazily, and reserves then releases budget per request', async () => {
    const releasedBefore = released;
    await post('/v2/models/identity/infer', {
      inputs: [{ name: 'INPUT0', shape: [1], datatype: 'INT8', data: [1] }],
    });
    expect(gatewayFactoryCalls).toBe(1);
    expect(budgetCalls.at(-1)).toBe('acme');
    await expect.poll(() => released).toBe(releasedBefore + 1);
  });

  it('BUDGET_EXCEEDED is 429 with Retry-After at the window reset (402 when configured)', async () => {
    const response = await post('/v2/models/identity/infer', {}, { 'x-tenant-id': 'broke' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('91');
    expect(((await response.json()) as Json).error.code).toBe('BUDGET_EXCEEDED');
    const paying = await fetch(`${base}/keyed/whoami`, { headers: { 'x-api-key': 'key-broke' } });
    expect(paying.status).toBe(402);
    expect(paying.headers.get('retry-after')).toBe('1');
  });

  it('resolves tenants from API keys; an unknown key is 401', async () => {
    const ok = await fetch(`${base}/keyed/whoami`, { headers: { authorization: 'Bearer key-a' } });
    expect((await ok.json()) as Json).toEqual({ tenant: 'team-a' });
    const unknown = await fetch(`${base}/keyed/whoami`, { headers: { 'x-api-key': 'nope' } });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as Json).error.code).toBe('UNAUTHENTICATED');
  });
});

describe('chat handler', () => {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four' }] };

  it('answers JSON', async () => {
    const response = await post('/chat', body);
    expect(response.status).toBe(200);
    const answer: Json = await response.json();
    expect(answer.text).toBe('echo: one two three four');
    expect(answer.usage.outputTokens).toBeGreaterThan(0);
  });

  it('streams Server-Sent Events ending with done', async () => {
    const response = await post('/chat', { ...body, stream: true });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(events[0]).toBe('text-delta');
    expect(events).toContain('usage');
    expect(events).toContain('finish');
    expect(events.at(-1)).toBe('done');
    const deltas = [...text.matchAll(/^data: (.+)$/gm)]
      .map((match) => JSON.parse(match[1] as string))
      .filter((event) => event.type === 'text-delta')
      .map((event) => event.text)
      .join('');
    expect(deltas).toBe('echo: one two three four');
  });

  it('an upstream error before the first event is a proper HTTP error', async () => {
    fakeOpenAI.setFault({ kind: 'rate-limit', retryAfter: '7', times: 1 });
    const response = await post('/chat', { ...body, stream: true });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(((await response.json()) as Json).error.code).toBe('RATE_LIMITED');
  });

  it('a client leaving mid-stream aborts the provider request', async () => {
    fakeOpenAI.reset();
    const controller = new AbortController();
    const response = await post('/chat', {
      ...body,
      stream: true,
      messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p q r s t u v w x y z' }],
    });
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    controller.abort();
    await expect.poll(() => fakeOpenAI.disconnects).toBeGreaterThan(0);
  });
});
