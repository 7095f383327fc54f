import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeLlmServer, startFakeOpenAI, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';

let triton: TestServer;
let openai: FakeLlmServer;
let http: Server;
let base: string;
let close: () => Promise<void>;

beforeAll(async () => {
  triton = await startTestServer();
  openai = await startFakeOpenAI({ chunkDelayMs: 2 });
  const created = createApp({
    tritonUrl: triton.url,
    openaiBaseUrl: openai.url,
    openaiApiKey: 'sk-test',
    apiKeys: { 'key-acme': 'acme', 'key-tiny': 'tiny' },
    dailyBudgetUsd: { acme: 5, tiny: 0.0001 },
  });
  close = created.close;
  http = created.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => http.close(resolve));
  await close();
  await triton.stop();
  await openai.close();
});

function post(path: string, key: string | undefined, body: unknown) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify(body),
  });
}

const messages = [{ role: 'user', content: 'one two three' }];

describe('express-app example', () => {
  it('serves KServe v2 REST inference through Triton gRPC', async () => {
    const response = await post('/v2/models/add_sub/infer', 'key-acme', {
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'FP32', data: Array.from({ length: 16 }, (_, i) => i) },
        { name: 'INPUT1', shape: [1, 16], datatype: 'FP32', data: new Array(16).fill(1) },
      ],
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { outputs: { name: string; data: number[] }[] };
    expect(body.outputs.find((output) => output.name === 'OUTPUT0')?.data.slice(0, 3)).toEqual([1, 2, 3]);
  });

  it('streams chat as Server-Sent Events and charges the tenant', async () => {
    const response = await post('/v1/chat', 'key-acme', { messages, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(events.filter((event) => event === 'text-delta').length).toBeGreaterThan(1);
    expect(events.slice(-3)).toEqual(['usage', 'finish', 'done']);
    const spend = await fetch(`${base}/v1/spend`, { headers: { 'x-api-key': 'key-acme' } });
    const report = (await spend.json()) as { rows: { tenant: string; model: string; costUsd: number }[] };
    const row = report.rows.find((candidate) => candidate.model === 'gpt-4o-mini');
    expect(row?.tenant).toBe('acme');
    expect(row?.costUsd).toBeGreaterThan(0);
  });

  it('a tenant over budget gets 429 BUDGET_EXCEEDED with Retry-After, and the provider is not called', async () => {
    const before = openai.calls;
    const response = await post('/v1/chat', 'key-tiny', { messages, max_tokens: 500 });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await response.json()) as { error: { code: string; retryable: boolean } };
    expect(body.error.code).toBe('BUDGET_EXCEEDED');
    expect(openai.calls).toBe(before);
  });

  it('rejects a missing or unknown API key with 401', async () => {
    expect((await post('/v1/chat', undefined, { messages })).status).toBe(401);
    const unknown = await post('/v1/chat', 'key-nope', { messages });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
  });
});
