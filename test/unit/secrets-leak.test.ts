// Every string the SDK emits during these runs (thrown errors in every rendering, toJSON(), console
// output, stdout/stderr, span names/attributes/events, HTTP answers of the Express layer) is
// collected and searched for the test credentials.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { format, inspect } from 'node:util';
import { createTritonClient, InfergateError } from '@infergate/core';
import { chatHandler, errorHandler, type Gateway, infergate } from '@infergate/express';
import { createAnthropicChatModel, createOpenAIChatModel } from '@infergate/llm';
import {
  type FakeLlmServer,
  startFakeAnthropic,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from './otel.js';

const KEYS = {
  openai: 'sk-proj-LEAKTEST-openai-5e4d3c2b1a',
  anthropic: 'sk-ant-LEAKTEST-anthropic-0f9e8d',
  triton: 'tok-LEAKTEST-triton-7a6b5c',
  header: 'hdr-LEAKTEST-bearer-3c2b1a',
  express: 'key-LEAKTEST-express-9a8b7c',
};

const emitted: string[] = [];
const restore: Array<() => void> = [];
let tracing: ReturnType<typeof installInMemoryTracing>;
let triton: TestServer;
let openaiServer: FakeLlmServer;
let anthropicServer: FakeLlmServer;
let http: Server;

function capture(): void {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[method];
    console[method] = (...args: unknown[]) => {
      emitted.push(format(...args));
      original.apply(console, args);
    };
    restore.push(() => {
      console[method] = original;
    });
  }
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      emitted.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = original;
    });
  }
}

/** Every way an error reaches a log: message, stack, inspect (with causes), JSON, toJSON(). */
function record(value: unknown): void {
  emitted.push(String(value), inspect(value, { depth: 12, showHidden: true }), JSON.stringify(value) ?? '');
  if (value instanceof Error) emitted.push(value.stack ?? '');
  if (value instanceof InfergateError) emitted.push(JSON.stringify(value.toJSON()));
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

const chatRequest = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

beforeAll(async () => {
  capture();
  tracing = installInMemoryTracing();
  triton = await startTestServer({
    restricted: { groups: ['inference'], header: 'triton-access-token', value: 'the-right-value' },
  });
  openaiServer = await startFakeOpenAI({ apiKey: 'another-key-entirely' });
  anthropicServer = await startFakeAnthropic({ apiKey: 'another-key-entirely' });
});

afterAll(async () => {
  for (const undo of restore.reverse()) undo();
  tracing.uninstall();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  await triton.stop();
  await openaiServer.close();
  await anthropicServer.close();
});

describe('credentials never leave the SDK', () => {
  it('Triton access token and header values: not in errors, logs of the client, or spans', async () => {
    const client = createTritonClient({
      url: triton.url,
      accessToken: KEYS.triton,
      headers: { authorization: `Bearer ${KEYS.header}` },
    });
    try {
      const denied = await failure(
        client.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [1] }]),
      );
      expect((denied as InfergateError).code).toBe('PERMISSION_DENIED');
      record(denied);
      record(await failure(client.modelMetadata('no-such-model')));
      // A user logging the client or its options.
      console.log(client);
      console.log('options', client.options);
      emitted.push(JSON.stringify(client), JSON.stringify(client.options), inspect(client, { depth: 12 }));
      expect(client.options.accessToken).toBe(KEYS.triton);
    } finally {
      await client.close();
    }
  });

  it('LLM API keys: not in errors (even when the provider quotes them) or spans', async () => {
    const echoing = createOpenAIChatModel({
      apiKey: KEYS.openai,
      baseURL: openaiServer.url,
      fetch: async () =>
        new Response(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEYS.openai}` } }), {
          status: 500,
          headers: { 'content-type': 'application/json' },
        }),
    });
    for (const model of [
      createOpenAIChatModel({ apiKey: KEYS.openai, baseURL: openaiServer.url }),
      createAnthropicChatModel({ apiKey: KEYS.anthropic, baseURL: anthropicServer.url }),
      echoing,
    ]) {
      record(await failure(model.chat(chatRequest)));
      console.log(model);
    }
  });

  it('Express: API keys of tenants and providers are not in answers or in the error log', async () => {
    const echoing = createOpenAIChatModel({
      apiKey: KEYS.openai,
      baseURL: openaiServer.url,
      fetch: async () =>
        new Response(`upstream failure for key ${KEYS.openai}`, {
          status: 502,
          headers: { 'content-type': 'text/plain' },
        }),
    });
    const app = express();
    app.use(express.json());
    app.use(
      infergate<Gateway>({ gateway: { chat: echoing }, tenant: { apiKeys: { [KEYS.express]: 'team-a' } } }),
    );
    app.post('/chat', chatHandler());
    app.use(errorHandler());
    http = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => http.once('listening', resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    for (const key of [KEYS.express, `${KEYS.express}-wrong`]) {
      const response = await fetch(`${base}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify(chatRequest),
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
      emitted.push(await response.text(), JSON.stringify([...response.headers]));
    }
  });

  it('nothing emitted holds a key', () => {
    const spans = tracing.exporter.getFinishedSpans().map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      events: span.events,
    }));
    expect(spans.length).toBeGreaterThan(0);
    emitted.push(JSON.stringify(spans));
    const everything = emitted.join('\n');
    // The collection really saw the runs (the tenant answer, the client log and the Triton error).
    expect(everything).toContain('PERMISSION_DENIED');
    expect(everything).toContain('[hidden]');
    for (const [owner, key] of Object.entries(KEYS)) {
      expect(everything.includes(key), `the ${owner} key leaked`).toBe(false);
    }
  });
});
