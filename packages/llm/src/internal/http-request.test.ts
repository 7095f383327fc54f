import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { InfergateError } from '@infergate/core';
import { generateTestCertificates } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../openai-chat-model.js';
import { parseJson, postJson } from './http-request.js';

const MiB = 1024 * 1024;
const servers: Server[] = [];
let base: string;
let requests = 0;

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const port = await listen(
    createServer((request, response) => {
      requests++;
      request.resume();
      const big = JSON.stringify({ pad: 'x'.repeat(MiB) });
      if (request.url === '/declared') {
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(big),
        });
        response.end(big);
      } else if (request.url === '/chunked') {
        response.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 16; i++)
          response.write(big.slice(i * (big.length / 16), (i + 1) * (big.length / 16)));
        response.end();
      } else if (request.url === '/error') {
        response.writeHead(500, { 'content-type': 'text/html' });
        response.end(`<html>${'y'.repeat(4 * MiB)}</html>`);
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"ok":true}');
      }
    }),
  );
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const context = { provider: 'test', secrets: [] };
function post(path: string, extra: { maxResponseBytes?: number; headers?: Record<string, string> } = {}) {
  return postJson({
    url: new URL(path, base),
    headers: extra.headers ?? {},
    body: {},
    signal: AbortSignal.timeout(10_000),
    fetch: globalThis.fetch,
    expect: 'json',
    errorContext: context,
    ...(extra.maxResponseBytes !== undefined ? { maxResponseBytes: extra.maxResponseBytes } : {}),
  });
}

async function rejection(promise: Promise<unknown>): Promise<InfergateError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InfergateError);
  return error as InfergateError;
}

describe('LLM HTTP responses are size-limited', () => {
  it('a body over maxResponseBytes fails DATA_LOSS, with or without a content-length', async () => {
    for (const path of ['/declared', '/chunked']) {
      const error = await rejection(
        post(path, { maxResponseBytes: 64 * 1024 }).then((response) => response.text()),
      );
      expect(error.code).toBe('DATA_LOSS');
      expect(error.retryable).toBe(false);
      expect(error.details).toMatchObject({ option: 'maxResponseBytes', limit: 64 * 1024 });
    }
    // Under the limit, the same answer reads whole.
    expect((await (await post('/declared')).text()).length).toBeGreaterThan(MiB);
  });

  it('an error page of 4 MiB is read only up to 64 KiB', async () => {
    const error = await rejection(post('/error'));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.rawMessage.length).toBeLessThan(70 * 1024);
  });
});

describe('request headers', () => {
  it('CR/LF and non-ASCII in a header value are refused before sending, without showing the value', async () => {
    const before = requests;
    for (const value of ['Bearer sk-SECRET\r\nX-Injected: 1', 'Bearer sk-SECRET\n', 'Bearer sk-SECRÉT']) {
      const error = await rejection(post('/ok', { headers: { authorization: value } }));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.rawMessage).toContain("'authorization'");
      expect(error.rawMessage).not.toContain('SECR');
    }
    expect(requests).toBe(before);
  });

  it('through a model: an API key with a newline is refused and not echoed', async () => {
    const model = createOpenAIChatModel({ apiKey: 'sk-SECRET\r\nX-Evil: 1', baseURL: `${base}/v1` });
    const error = await rejection(model.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(JSON.stringify(error.toJSON()) + String(error)).not.toContain('sk-SECRET');
  });
});

describe('provider JSON', () => {
  it('drops __proto__ keys, also when written with \\u escapes, so merging cannot pollute a prototype', () => {
    for (const text of [
      '{"a":1,"__proto__":{"polluted":true},"nested":{"__proto__":{"polluted":true}}}',
      '{"a":1,"\\u005f_proto__":{"polluted":true}}',
    ]) {
      const parsed = parseJson(text, 'a body', 'test') as Record<string, unknown>;
      expect(parsed.a).toBe(1);
      expect(Object.hasOwn(parsed, '__proto__')).toBe(false);
      const merged: Record<string, unknown> = Object.assign({}, parsed, parsed.nested as object);
      expect(merged.polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});

describe('TLS', () => {
  it('an HTTPS provider whose certificate does not chain to a trusted CA is refused', async () => {
    const certs = generateTestCertificates();
    const https = createHttpsServer(
      { key: certs.serverKey, cert: certs.serverCert },
      (_request, response) => {
        response.end('{}');
      },
    );
    const port = await listen(https as unknown as Server);
    const model = createOpenAIChatModel({ apiKey: 'sk-test', baseURL: `https://127.0.0.1:${port}/v1` });
    const error = await rejection(model.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.rawMessage).toMatch(/certificate|fetch failed/i);
  });
});
