import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode, InfergateError } from '@infergate/core';
import {
  type FakeLlmFault,
  type FakeLlmServer,
  startFakeAnthropic,
  startFakeOpenAI,
} from '@infergate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicChatModel } from './anthropic-chat-model.js';
import { createOpenAIChatModel } from './openai-chat-model.js';
import type { ChatModel } from './types.js';

interface Provider {
  name: string;
  server: FakeLlmServer;
  model: ChatModel;
}

const providers: Provider[] = [];

beforeAll(async () => {
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  providers.push(
    {
      name: 'openai',
      server: openai,
      model: createOpenAIChatModel({ apiKey: 'sk-x-key', baseURL: openai.url }),
    },
    {
      name: 'anthropic',
      server: anthropic,
      model: createAnthropicChatModel({ apiKey: 'sk-ant-x-key', baseURL: anthropic.url }),
    },
  );
});
beforeEach(() => {
  for (const provider of providers) provider.server.reset();
});
afterAll(async () => {
  for (const provider of providers) await provider.server.stop();
});

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'one two three four' }] };

async function failure(run: () => Promise<unknown>): Promise<InfergateError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof InfergateError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function drain(model: ChatModel): Promise<void> {
  for await (const _event of model.chatStream(request)) {
    // read everything
  }
}

interface Case {
  fault: FakeLlmFault;
  code: ErrorCode;
  retryable: boolean;
  backpressure: boolean;
  status?: number;
  /** Only for this provider. */
  only?: string;
}

// What a fault must fail with: retried without backing off, backing off, or not retried.
const transient = { retryable: true, backpressure: false };
const backOff = { retryable: true, backpressure: true };
const permanent = { retryable: false, backpressure: false };

const cases: Case[] = [
  { fault: { kind: 'rate-limit', retryAfter: '2' }, code: ErrorCode.RateLimited, ...backOff, status: 429 },
  { fault: { kind: 'overloaded' }, code: ErrorCode.Overloaded, ...backOff },
  { fault: { kind: 'server-error' }, code: ErrorCode.Unavailable, ...transient, status: 500 },
  { fault: { kind: 'server-error', status: 503 }, code: ErrorCode.Unavailable, ...transient, status: 503 },
  { fault: { kind: 'unauthorized' }, code: ErrorCode.Unauthenticated, ...permanent, status: 401 },
  { fault: { kind: 'forbidden' }, code: ErrorCode.PermissionDenied, ...permanent, status: 403 },
  { fault: { kind: 'not-found' }, code: ErrorCode.NotFound, ...permanent, status: 404 },
  { fault: { kind: 'context-length' }, code: ErrorCode.ContextLengthExceeded, ...permanent, status: 400 },
  {
    fault: { kind: 'content-filter' },
    code: ErrorCode.ContentFiltered,
    ...permanent,
    status: 400,
    only: 'openai',
  },
  { fault: { kind: 'malformed-json' }, code: ErrorCode.DataLoss, ...permanent },
  { fault: { kind: 'schema-mismatch' }, code: ErrorCode.DataLoss, ...permanent },
  { fault: { kind: 'wrong-content-type' }, code: ErrorCode.DataLoss, ...permanent },
  { fault: { kind: 'reset-mid-stream' }, code: ErrorCode.Unavailable, ...transient },
];

describe.each(['openai', 'anthropic'])('%s faults', (name) => {
  const provider = () => providers.find((candidate) => candidate.name === name) as Provider;

  it.each(cases.filter((c) => c.only === undefined || c.only === name))(
    '$fault.kind → $code',
    async ({ fault, code, retryable, backpressure, status }) => {
      const { server, model } = provider();
      server.setFault(fault);
      const error = await failure(() => model.chat(request));
      expect(error.code).toBe(code);
      expect(error.retryable).toBe(retryable);
      expect(error.backpressure).toBe(backpressure);
      if (status !== undefined) expect(error.httpStatus).toBe(status);
      expect(error.model).toBe('m');
    },
  );

  it('parses Retry-After and retry-after-ms into retryAfterMs', async () => {
    const { server, model } = provider();
    server.setFault({ kind: 'rate-limit', retryAfter: '7' });
    expect((await failure(() => model.chat(request))).retryAfterMs).toBe(7000);
    server.setFault({ kind: 'rate-limit', retryAfter: '7', retryAfterMs: 1500 });
    expect((await failure(() => model.chat(request))).retryAfterMs).toBe(1500);
    const date = new Date(Date.now() + 60_000).toUTCString();
    server.setFault({ kind: 'rate-limit', retryAfter: date });
    const fromDate = (await failure(() => model.chat(request))).retryAfterMs ?? 0;
    expect(fromDate).toBeGreaterThan(55_000);
    expect(fromDate).toBeLessThanOrEqual(60_000);
  });

  it('fails a stream cut mid-way with UNAVAILABLE, a malformed frame with DATA_LOSS', async () => {
    const { server, model } = provider();
    server.setFault({ kind: 'reset-mid-stream', afterChunks: 2 });
    const reset = await failure(() => drain(model));
    expect(reset.code).toBe(ErrorCode.Unavailable);
    expect(reset.retryable).toBe(true);
    server.setFault({ kind: 'malformed-sse', afterChunks: 1 });
    const malformed = await failure(() => drain(model));
    expect(malformed.code).toBe(ErrorCode.DataLoss);
    expect(malformed.message).toMatch(/not JSON/);
    server.setFault({ kind: 'wrong-content-type' });
    expect((await failure(() => drain(model))).code).toBe(ErrorCode.DataLoss);
    server.setFault({ kind: 'overloaded' });
    expect((await failure(() => drain(model))).code).toBe(ErrorCode.Overloaded);
  });

  it('maps an error event in the middle of a stream', async () => {
    const { server, model } = provider();
    server.setFault({ kind: 'stream-error', afterChunks: 2 });
    const texts: string[] = [];
    const error = await failure(async () => {
      for await (const event of model.chatStream(request))
        if (event.type === 'text-delta') texts.push(event.text);
    });
    expect(texts).toEqual(['echo:', ' one']);
    expect(error.code).toBe(name === 'anthropic' ? ErrorCode.Overloaded : ErrorCode.Unavailable);
    expect(error.retryable).toBe(true);
  });

  it('applies a fault only `times` times and counts it', async () => {
    const { server, model } = provider();
    server.setFault({ kind: 'server-error', times: 1 });
    await failure(() => model.chat(request));
    expect((await model.chat(request)).text).toBe('echo: one two three four');
    expect(server.faultHits).toBe(1);
    expect(server.calls).toBe(2);
  });

  it('fails with UNAVAILABLE when nothing listens', async () => {
    const port = await freePort();
    const closed =
      name === 'openai'
        ? createOpenAIChatModel({ apiKey: 'k-123456', baseURL: `http://127.0.0.1:${port}/v1` })
        : createAnthropicChatModel({ apiKey: 'k-123456', baseURL: `http://127.0.0.1:${port}` });
    const error = await failure(() => closed.chat(request));
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(error.message).toMatch(/ECONNREFUSED/);
  });
});
