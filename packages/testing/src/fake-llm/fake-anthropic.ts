import type { ServerResponse } from 'node:http';
import type { FakeLlmFault } from './fake-faults.js';
import {
  type ExchangeContext,
  type FakeLlmServer,
  pause,
  sendJson,
  startFakeHttpServer,
  startSse,
  writeSse,
} from './fake-http-server.js';
import { type FakeLlmOptions, fakeReply, readChatRequest, setResponseHeaders } from './fake-reply.js';

export interface FakeAnthropicOptions extends FakeLlmOptions {
  /** Reported as cache_read_input_tokens (not part of input_tokens, as Anthropic counts). @default 0 */
  cacheReadTokens?: number;
  /** Reported as cache_creation_input_tokens. @default 0 */
  cacheWriteTokens?: number;
}

function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

const requestIdHeader = { 'request-id': 'req_fake_0001' };

function sendFault(response: ServerResponse, fault: FakeLlmFault | undefined): boolean {
  switch (fault?.kind) {
    case 'rate-limit': {
      const headers: Record<string, string> = { ...requestIdHeader, 'retry-after': fault.retryAfter ?? '1' };
      if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
      sendJson(
        response,
        429,
        anthropicError(
          'rate_limit_error',
          'Number of request tokens has exceeded your per-minute rate limit',
        ),
        headers,
      );
      return true;
    }
    case 'server-error':
      sendJson(
        response,
        fault.status ?? 500,
        anthropicError('api_error', 'Internal server error'),
        requestIdHeader,
      );
      return true;
    case 'overloaded':
      sendJson(response, 529, anthropicError('overloaded_error', 'Overloaded'), requestIdHeader);
      return true;
    case 'unauthorized':
      sendJson(response, 401, anthropicError('authentication_error', 'invalid x-api-key'), requestIdHeader);
      return true;
    case 'forbidden':
      sendJson(
        response,
        403,
        anthropicError(
          'permission_error',
          'Your API key does not have permission to use the specified resource.',
        ),
        requestIdHeader,
      );
      return true;
    case 'not-found':
      sendJson(response, 404, anthropicError('not_found_error', 'model: nope'), requestIdHeader);
      return true;
    case 'context-length':
      sendJson(
        response,
        400,
        anthropicError('invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum'),
        requestIdHeader,
      );
      return true;
    case 'malformed-json':
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id": "msg_broken", "content": [');
      return true;
    case 'schema-mismatch':
      sendJson(response, 200, { id: 'msg_broken', type: 'message', content: 'none' });
      return true;
    case 'wrong-content-type':
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Welcome to the captive portal</body></html>');
      return true;
    default:
      return false;
  }
}

function stopReason(finish: 'stop' | 'length', hitStop: boolean): string {
  if (finish === 'length') return 'max_tokens';
  return hitStop ? 'stop_sequence' : 'end_turn';
}

/**
 * A fake Anthropic Messages server (`POST /v1/messages`, JSON and SSE events) on 127.0.0.1. It
 * replies `echo: <last user message>` (or `options.reply`) and counts words as tokens.
 */
export function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeLlmServer> {
  let sequence = 0;
  let calls = 0;
  const handle = async ({ request, response, body, fault, signal }: ExchangeContext): Promise<void> => {
    setResponseHeaders(response, options, ++calls);
    if (fault?.kind === 'slow-first-byte' && !(await pause(fault.delayMs, signal))) return;
    if (options.apiKey !== undefined && request.headers['x-api-key'] !== options.apiKey) {
      sendJson(response, 401, anthropicError('authentication_error', 'invalid x-api-key'), requestIdHeader);
      return;
    }
    if (sendFault(response, fault)) return;
    const chat = readChatRequest(body);
    const reply = fakeReply(chat, options);
    const id = `msg_fake_${String(++sequence).padStart(4, '0')}`;
    const model = options.responseModel ?? chat.model;
    const refused = fault?.kind === 'content-filter';
    const hitStop =
      chat.stop.length > 0 &&
      reply.finish === 'stop' &&
      reply.text !== fakeReply({ ...chat, stop: [] }, options).text;
    const stop = refused ? 'refusal' : stopReason(reply.finish, hitStop);
    const usage = {
      input_tokens: reply.inputTokens,
      cache_creation_input_tokens: options.cacheWriteTokens ?? 0,
      cache_read_input_tokens: options.cacheReadTokens ?? 0,
      output_tokens: reply.outputTokens,
      service_tier: 'standard',
    };
    if (!chat.stream) {
      if (fault?.kind === 'reset-mid-stream') {
        response.socket?.destroy();
        return;
      }
      sendJson(
        response,
        200,
        {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [{ type: 'text', text: reply.text }],
          stop_reason: stop,
          stop_sequence: null,
          usage,
        },
        requestIdHeader,
      );
      return;
    }
    startSse(response);
    writeSse(
      response,
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
      'message_start',
    );
    writeSse(
      response,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      'content_block_start',
    );
    writeSse(response, { type: 'ping' }, 'ping');
    const afterChunks = (fault as { afterChunks?: number } | undefined)?.afterChunks ?? 1;
    for (let index = 0; index < reply.chunks.length; index++) {
      if (index === afterChunks && fault !== undefined) {
        if (fault.kind === 'reset-mid-stream') {
          response.socket?.destroy();
          return;
        }
        if (fault.kind === 'malformed-sse') {
          response.write(
            'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n',
          );
          response.end();
          return;
        }
        if (fault.kind === 'stream-error') {
          writeSse(response, anthropicError(fault.errorType ?? 'overloaded_error', 'Overloaded'), 'error');
          response.end();
          return;
        }
      }
      if (!(await pause(options.chunkDelayMs ?? 0, signal))) return;
      writeSse(
        response,
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.chunks[index] } },
        'content_block_delta',
      );
    }
    writeSse(response, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
    writeSse(
      response,
      {
        type: 'message_delta',
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: reply.outputTokens },
      },
      'message_delta',
    );
    writeSse(response, { type: 'message_stop' }, 'message_stop');
    response.end();
  };
  return startFakeHttpServer('/v1/messages', '', handle);
}
