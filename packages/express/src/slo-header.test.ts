import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CallOptions, callSloOf } from '@infergate/core';
import type { ChatModel, ChatRequest } from '@infergate/llm';
import { createChatRouter } from '@infergate/router';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatHandler, errorHandler, type Gateway, infergate } from './index.js';

let http: Server;
let base: string;
/** The SLO each call reached the model with (through the chat router). */
const seen: (number | undefined)[] = [];
let slowAnswers = false;

const model: ChatModel = {
  provider: 'fake',
  async chat(request: ChatRequest, options?: CallOptions) {
    seen.push(callSloOf(options)?.ttftMs);
    if (slowAnswers) await new Promise((resolve) => setTimeout(resolve, 30));
    return {
      id: 'x',
      model: request.model,
      text: 'hi',
      finishReason: 'stop',
      rawFinishReason: 'stop',
      provider: 'fake',
      usage: {
        inputTokens: 1,
        outputTokens: 1,
        cacheReadTokens: undefined,
        cacheWriteTokens: undefined,
        reasoningTokens: undefined,
        raw: {},
      },
    };
  },
  // biome-ignore lint/correctness/useYield: never streams here
  async *chatStream() {
    throw new Error('no streams here');
  },
};
// decayMs 1: the latency average is the last answer's, so one slow answer is enough to judge by.
const router = createChatRouter({
  targets: [{ name: 'only', model }],
  admission: { minSamples: 1 },
  balance: { decayMs: 1 },
});

beforeAll(async () => {
  const app = express();
  app.use(infergate<Gateway>({ gateway: { chat: router }, defaultTenant: 'anonymous' }));
  app.post('/chat', chatHandler());
  app.use(errorHandler());
  http = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => http.close(resolve));
  await router.close();
});

const post = (headers: Record<string, string>) =>
  fetch(`${base}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }),
  });

describe('x-slo-ttft-ms', () => {
  it('carries the header into the call context, through the router, to the model', async () => {
    expect((await post({ 'x-slo-ttft-ms': '60000' })).status).toBe(200);
    expect((await post({})).status).toBe(200);
    expect(seen).toEqual([60_000, undefined]);
  });

  it('answers 400 INVALID_ARGUMENT for a garbled value, and calls nothing', async () => {
    const before = seen.length;
    for (const value of ['soon', '-5', '0', '1e3']) {
      const response = await post({ 'x-slo-ttft-ms': value });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    }
    expect(seen.length).toBe(before);
  });

  it('answers 504 at once when the target cannot meet the SLO', async () => {
    slowAnswers = true;
    expect((await post({})).status).toBe(200); // measured: ≥ 30 ms
    const before = seen.length;
    const response = await post({ 'x-slo-ttft-ms': '5' });
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: 'DEADLINE_EXCEEDED' } });
    expect(seen.length).toBe(before);
  });
});
