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
import {
  type FakeLlmOptions,
  type FakeReply,
  fakeReply,
  readChatRequest,
  setResponseHeaders,
} from './fake-reply.js';

export interface FakeOpenAIOptions extends FakeLlmOptions {
  /** A cached prompt prefix: added to prompt_tokens and reported as cached_tokens. @default 0 */
  cachedTokens?: number;
  /** Reasoning tokens: added to completion_tokens and reported as reasoning_tokens. @default 0 */
  reasoningTokens?: number;
  /** Send no usage at all (as some OpenAI-compatible servers do). @default false */
  omitUsage?: boolean;
}

function openAIError(message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

/** Answers an error fault; true when it did. */
function sendFault(response: ServerResponse, fault: FakeLlmFault | undefined): boolean {
  switch (fault?.kind) {
    case 'rate-limit': {
      const headers: Record<string, string> = { 'retry-after': fault.retryAfter ?? '1' };
      if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
      sendJson(
        response,
        429,
        openAIError(
          'Rate limit reached for requests per min (RPM): Limit 3, Used 3.',
          'requests',
          'rate_limit_exceeded',
        ),
        headers,
      );
      return true;
    }
    case 'server-error':
      sendJson(
        response,
        fault.status ?? 500,
        openAIError(
          'The server had an error while processing your request. Sorry about that!',
          'server_error',
          null,
        ),
      );
      return true;
    case 'overloaded':
      sendJson(
        response,
        503,
        openAIError('The engine is currently overloaded, please try again later.', 'server_error', null),
      );
      return true;
    case 'unauthorized':
      sendJson(
        response,
        401,
        openAIError('Incorrect API key provided: sk-fake***.', 'invalid_request_error', 'invalid_api_key'),
      );
      return true;
    case 'forbidden':
      sendJson(
        response,
        403,
        openAIError('Project does not have access to model', 'invalid_request_error', 'model_not_found'),
      );
      return true;
    case 'not-found':
      sendJson(
        response,
        404,
        openAIError(
          'The model `nope` does not exist or you do not have access to it.',
          'invalid_request_error',
          'model_not_found',
        ),
      );
      return true;
    case 'context-length':
      sendJson(
        response,
        400,
        openAIError(
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
          'invalid_request_error',
          'context_length_exceeded',
          'messages',
        ),
      );
      return true;
    case 'content-filter':
      sendJson(
        response,
        400,
        openAIError(
          'Your request was rejected as a result of our safety system.',
          'invalid_request_error',
          'content_policy_violation',
        ),
      );
      return true;
    case 'malformed-json':
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id": "chatcmpl-broken", "choices": [');
      return true;
    case 'schema-mismatch':
      sendJson(response, 200, { id: 42, object: 'chat.completion', choices: 'none' });
      return true;
    case 'wrong-content-type':
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Welcome to the captive portal</body></html>');
      return true;
    default:
      return false;
  }
}

function usageOf(reply: FakeReply, options: FakeOpenAIOptions) {
  const cached = options.cachedTokens ?? 0;
  const reasoning = options.reasoningTokens ?? 0;
  const prompt = reply.inputTokens + cached;
  const completion = reply.outputTokens + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/**
 * A fake OpenAI Chat Completions server (`POST /v1/chat/completions`, JSON and SSE) on 127.0.0.1.
 * It replies `echo: <last user message>` (or `options.reply`) and counts words as tokens.
 */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeLlmServer> {
  let sequence = 0;
  let calls = 0;
  const handle = async ({ request, response, body, fault, signal }: ExchangeContext): Promise<void> => {
    setResponseHeaders(response, options, ++calls);
    if (fault?.kind === 'slow-first-byte' && !(await pause(fault.delayMs, signal))) return;
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      sendJson(
        response,
        401,
        openAIError('Incorrect API key provided: sk-***.', 'invalid_request_error', 'invalid_api_key'),
      );
      return;
    }
    if (sendFault(response, fault)) return;
    const chat = readChatRequest(body);
    const reply = fakeReply(chat, options);
    const id = `chatcmpl-fake-${++sequence}`;
    const model = options.responseModel ?? chat.model;
    const created = 1_700_000_000 + sequence;
    const finish = fault?.kind === 'content-filter-finish' ? 'content_filter' : reply.finish;
    const usage = options.omitUsage ? undefined : usageOf(reply, options);
    if (!chat.stream) {
      if (fault?.kind === 'reset-mid-stream') {
        response.socket?.destroy();
        return;
      }
      sendJson(response, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: reply.text, refusal: null, annotations: [] },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        ...(usage === undefined ? {} : { usage }),
        service_tier: 'default',
        system_fingerprint: 'fp_fake',
      });
      return;
    }
    const includeUsage =
      !options.omitUsage &&
      (chat.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const frame = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
    startSse(response);
    writeSse(
      response,
      frame([
        {
          index: 0,
          delta: { role: 'assistant', content: '', refusal: null },
          logprobs: null,
          finish_reason: null,
        },
      ]),
    );
    const afterChunks = (fault as { afterChunks?: number } | undefined)?.afterChunks ?? 1;
    for (let index = 0; index < reply.chunks.length; index++) {
      if (index === afterChunks && fault !== undefined) {
        if (fault.kind === 'reset-mid-stream') {
          response.socket?.destroy();
          return;
        }
        if (fault.kind === 'malformed-sse') {
          writeSse(response, '{"id": "chatcmpl-broken", "choices": [{');
          response.end();
          return;
        }
        if (fault.kind === 'stream-error') {
          writeSse(
            response,
            openAIError(
              'The server had an error while processing your request.',
              fault.errorType ?? 'server_error',
              null,
            ),
          );
          response.end();
          return;
        }
      }
      if (!(await pause(options.chunkDelayMs ?? 0, signal))) return;
      writeSse(
        response,
        frame([{ index: 0, delta: { content: reply.chunks[index] }, logprobs: null, finish_reason: null }]),
      );
    }
    writeSse(response, frame([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]));
    if (includeUsage) writeSse(response, frame([], { usage }));
    writeSse(response, '[DONE]');
    response.end();
  };
  return startFakeHttpServer('/v1/chat/completions', '/v1', handle);
}
