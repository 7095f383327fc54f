import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlmServer, fakeKeyMarker } from './fake-http-server.js';
import { startFakeOpenAI } from './fake-openai.js';

let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeOpenAI({ cachedTokens: 2, reasoningTokens: 1 });
});
beforeEach(() => server.reset());
afterAll(() => server.stop());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-wire-test-key', ...headers },
    body: JSON.stringify(body),
  });

const messages = [
  { role: 'system', content: 'be kind' },
  { role: 'user', content: 'hello there' },
];

describe('startFakeOpenAI', () => {
  it('answers a chat completion with deterministic text and word-count usage', async () => {
    const response = await post({ model: 'gpt-x', messages });
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toMatchObject({
      id: 'chatcmpl-fake-1',
      object: 'chat.completion',
      model: 'gpt-x',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'echo: hello there' }, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: 6,
        completion_tokens: 4,
        total_tokens: 10,
        prompt_tokens_details: { cached_tokens: 2 },
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    });
  });

  it('streams chunks, a finish chunk, a usage chunk and [DONE]', async () => {
    const response = await post({
      model: 'gpt-x',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const frames = (await response.text())
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => frame.replace(/^data: /, ''));
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? null)).toEqual([
      '',
      'echo:',
      ' hello',
      ' there',
      null,
      null,
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 6, completion_tokens: 4 } });
  });

  it('records requests with the key replaced by a marker', async () => {
    await post({ model: 'gpt-x', messages });
    expect(server.requests).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/v1/chat/completions',
        body: { model: 'gpt-x', messages },
      }),
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${fakeKeyMarker('sk-wire-test-key')}`);
    expect(JSON.stringify(server.requests)).not.toContain('sk-wire-test-key');
    expect(server.calls).toBe(1);
  });

  it('injects faults with headers and counts them', async () => {
    server.setFault({ kind: 'rate-limit', retryAfter: '3', retryAfterMs: 2500, times: 1 });
    const limited = await post({ model: 'gpt-x', messages });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.headers.get('retry-after-ms')).toBe('2500');
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect((await post({ model: 'gpt-x', messages })).status).toBe(200);
    expect(server.faultHits).toBe(1);
    server.setFault({ kind: 'context-length' });
    expect(await (await post({ model: 'gpt-x', messages })).json()).toMatchObject({
      error: { code: 'context_length_exceeded' },
    });
    server.setFault({ kind: 'overloaded' });
    expect((await post({ model: 'gpt-x', messages })).status).toBe(503);
  });

  it('answers 404 off the chat route and rejects a wrong key when one is set', async () => {
    const missing = await fetch(`${server.url}/models`);
    expect(missing.status).toBe(404);
    const strict = await startFakeOpenAI({ apiKey: 'sk-right' });
    try {
      const wrong = await fetch(`${strict.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-wrong' },
        body: JSON.stringify({ model: 'm', messages }),
      });
      expect(wrong.status).toBe(401);
    } finally {
      await strict.stop();
    }
  });
});
