import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from './fake-anthropic.js';
import { type FakeLlmServer, fakeKeyMarker } from './fake-http-server.js';

let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeAnthropic({ cacheReadTokens: 7 });
});
beforeEach(() => server.reset());
afterAll(() => server.stop());

const post = (body: unknown) =>
  fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-wire',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  });

const body = {
  model: 'claude-x',
  max_tokens: 2,
  system: 'short',
  messages: [{ role: 'user', content: 'one two three' }],
};

describe('startFakeAnthropic', () => {
  it('answers a message with max_tokens applied and cache usage', async () => {
    const response = await post(body);
    expect(response.headers.get('request-id')).toBe('req_fake_0001');
    expect(await response.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'echo: one' }],
      stop_reason: 'max_tokens',
      usage: {
        input_tokens: 4,
        cache_read_input_tokens: 7,
        cache_creation_input_tokens: 0,
        output_tokens: 2,
      },
    });
    expect(server.requests[0]?.headers['x-api-key']).toBe(fakeKeyMarker('sk-ant-wire'));
  });

  it('streams the Messages event sequence', async () => {
    const text = await (await post({ ...body, stream: true })).text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(text).toContain('"usage":{"output_tokens":2}');
  });

  it('sends 529 overloaded_error and a mid-stream error event', async () => {
    server.setFault({ kind: 'overloaded' });
    const overloaded = await post(body);
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    server.setFault({ kind: 'stream-error', afterChunks: 1 });
    const text = await (await post({ ...body, stream: true })).text();
    expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"overloaded_error"');
  });

  it('notices a client that goes away mid-stream', async () => {
    const slow = await startFakeAnthropic({ chunkDelayMs: 50, reply: 'a b c d e f' });
    try {
      const controller = new AbortController();
      const response = await fetch(`${slow.url}/v1/messages`, {
        method: 'POST',
        body: JSON.stringify({ ...body, max_tokens: 100, stream: true }),
        signal: controller.signal,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      controller.abort();
      await expect.poll(() => slow.disconnects, { interval: 10 }).toBe(1);
    } finally {
      await slow.stop();
    }
  });
});
