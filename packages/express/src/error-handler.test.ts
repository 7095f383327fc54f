import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InfergateError } from '@infergate/core';
import type { ChatModel } from '@infergate/llm';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatHandler, type ErrorLogEntry, errorHandler, type Gateway, infergate } from './index.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON checked field by field below
type Json = any;

const logged: ErrorLogEntry[] = [];
const servers: Server[] = [];
let base: string;
let exposing: string;

async function listen(app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function routes(app: express.Express): void {
  app.post('/echo', (request, response) => {
    response.json({ got: request.body });
  });
  app.get('/secret', () => {
    throw new Error('postgres://admin:hunter2@db/prod');
  });
  app.get('/upstream-down', () => {
    throw new InfergateError('UNAVAILABLE', "connect ECONNREFUSED (model 'm' at 10.1.2.3:44733)", {
      model: 'm',
      endpoint: '10.1.2.3:44733',
    });
  });
  app.get('/upstream-refused', () => {
    throw new InfergateError(
      'INVALID_ARGUMENT',
      "unexpected shape for input 'X' (model 'm' at 10.1.2.3:44733)",
      {
        model: 'm',
        endpoint: '10.1.2.3:44733',
      },
    );
  });
  app.get('/teapot', () => {
    throw Object.assign(new Error("I'm a teapot"), { status: 418, expose: true });
  });
  app.get('/hidden', () => {
    throw Object.assign(new Error('internal detail of a 4xx'), { statusCode: 409, expose: false });
  });
}

beforeAll(async () => {
  const app = express();
  app.use(express.json({ limit: '100kb' }));
  routes(app);
  const keyed = express.Router();
  keyed.use(infergate({ gateway: {}, tenant: { apiKeys: { 'key-a': 'team-a' } } }));
  keyed.get('/whoami', (_request, response) => {
    response.json({ ok: true });
  });
  app.use('/keyed', keyed);
  // A chat model that fails after its first event, with an internal message.
  const failing: ChatModel = {
    provider: 'test',
    defaultModel: 'm',
    chat: () => Promise.reject(new Error('postgres://admin:hunter2@db/prod')),
    async *chatStream() {
      yield { type: 'text-delta', text: 'hel' };
      throw new Error('postgres://admin:hunter2@db/prod');
    },
  };
  const chat = express.Router();
  chat.use(infergate<Gateway>({ gateway: { chat: failing }, logError: (entry) => logged.push(entry) }));
  chat.post('/', chatHandler());
  app.use('/chat', chat);
  app.use(errorHandler({ logError: (entry) => logged.push(entry) }));
  base = await listen(app);

  const open = express();
  open.use(express.json());
  routes(open);
  open.use(errorHandler({ exposeInternalErrors: true, logError: () => {} }));
  exposing = await listen(open);
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

function postJson(body: string, headers: Record<string, string> = {}) {
  return fetch(`${base}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

describe('errorHandler() over real HTTP with express.json() in front', () => {
  it('a malformed JSON body is 400 with the parser message, and a request id though infergate() never ran', async () => {
    const response = await postJson('{"inputs": [');
    expect(response.status).toBe(400);
    const body: Json = await response.json();
    expect(body.error.code).toBe('INVALID_ARGUMENT');
    expect(body.error.retryable).toBe(false);
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('x-request-id')).toBe(body.error.requestId);
  });

  it("echoes the caller's request id, and replaces one that is not a safe value", async () => {
    const given = await postJson('{', { 'x-request-id': 'req-abc.123' });
    expect(((await given.json()) as Json).error.requestId).toBe('req-abc.123');
    expect(given.headers.get('x-request-id')).toBe('req-abc.123');
    const unsafe = await postJson('{', { 'x-request-id': 'has spaces <script>' });
    const id = ((await unsafe.json()) as Json).error.requestId;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a body over the limit is 413', async () => {
    const response = await postJson(JSON.stringify({ pad: 'x'.repeat(200 * 1024) }));
    expect(response.status).toBe(413);
    expect(((await response.json()) as Json).error.code).toBe('INVALID_ARGUMENT');
  });

  it("honours err.status with err.expose, and hides a 4xx's message when expose is false", async () => {
    const teapot = await fetch(`${base}/teapot`);
    expect(teapot.status).toBe(418);
    expect(((await teapot.json()) as Json).error.message).toBe("I'm a teapot");
    const hidden = await fetch(`${base}/hidden`);
    expect(hidden.status).toBe(409);
    expect(await hidden.text()).not.toContain('internal detail');
  });

  it("never sends a 5xx's own message: the client gets a generic one and the id, the log gets the message", async () => {
    logged.length = 0;
    const response = await fetch(`${base}/secret`, { headers: { 'x-request-id': 'req-secret' } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('postgres');
    const body: Json = JSON.parse(text);
    expect(body.error).toMatchObject({ code: 'UNKNOWN', requestId: 'req-secret' });
    expect(body.error.message).toContain('req-secret');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ requestId: 'req-secret', status: 500, code: 'UNKNOWN' });
    expect(logged[0]?.message).toContain('postgres://admin:hunter2@db/prod');
  });

  it('upstream addresses stay inside: not in a 503, not in a 400', async () => {
    const down = await fetch(`${base}/upstream-down`);
    expect(down.status).toBe(503);
    const downText = await down.text();
    expect(downText).not.toContain('10.1.2.3');
    expect(JSON.parse(downText).error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    const refused = await fetch(`${base}/upstream-refused`);
    expect(refused.status).toBe(400);
    const refusedBody: Json = await refused.json();
    expect(refusedBody.error.message).toContain("unexpected shape for input 'X'");
    expect(refusedBody.error.message).not.toContain('10.1.2.3');
  });

  it('exposeInternalErrors: true sends the message (opt-in)', async () => {
    const response = await fetch(`${exposing}/secret`);
    expect(response.status).toBe(500);
    expect(((await response.json()) as Json).error.message).toBe('postgres://admin:hunter2@db/prod');
  });

  it('a 401 carries WWW-Authenticate', async () => {
    const response = await fetch(`${base}/keyed/whoami`, { headers: { 'x-api-key': 'wrong' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="infergate"');
    expect(((await response.json()) as Json).error.code).toBe('UNAUTHENTICATED');
  });

  it("a stream that fails mid-way sends an error event without the 5xx's message, and logs it", async () => {
    logged.length = 0;
    const response = await fetch(`${base}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-stream' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('event: error');
    expect(text).toContain('req-stream');
    expect(text).not.toContain('hunter2');
    expect(
      logged.some((entry) => entry.requestId === 'req-stream' && entry.message.includes('hunter2')),
    ).toBe(true);
  });
});
