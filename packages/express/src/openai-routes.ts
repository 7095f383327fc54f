import { createHash, randomUUID } from 'node:crypto';
import { type CallOptions, createContextKey, ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import type { ChatModel, ChatUsage, FinishReason } from '@infergate/llm';
import { z } from 'zod';
import type { ErrorLogEntry } from './http-errors.js';
import type { Handler, HttpRequest, HttpResponse } from './http-types.js';
import { openAIError, sendOpenAIError } from './openai-errors.js';
import {
  type CompletionHead,
  chatRequestOf,
  chunkWire,
  completionWire,
  parseChatCompletionBody,
  usageChunkWire,
} from './openai-wire.js';
import { readJsonBody } from './read-body.js';
import { sloOfRequest, withSlo } from './slo-header.js';

/**
 * The context key @infergate/cost reads the caller's key id from (its `API_KEY_CONTEXT`, a
 * `Symbol.for` key): the same symbol, without a dependency on that package.
 */
const API_KEY_CONTEXT = createContextKey<string>('infergate.cost.apiKey');

/** An API key's owner: the tenant budgets count against, and an id safe to store in reports. */
export interface OpenAIKeyOwner {
  tenant: string;
  /** Stands for the key in ledgers and spend reports (the key itself never is). @default a hash of the key */
  id?: string;
}

export interface OpenAIRoutesOptions {
  /**
   * API key (`Authorization: Bearer <key>`) → tenant. With keys, a request without a known key gets
   * 401; without, every request is `defaultTenant`'s. @default no keys
   */
  apiKeys?: Readonly<Record<string, string | OpenAIKeyOwner>>;
  /** Tenant of every request when there are no `apiKeys`. @default 'anonymous' */
  defaultTenant?: string;
  /**
   * The model names `GET /v1/models` lists and requests may use (others get 404 `model_not_found`).
   * @default the chat model's defaultModel, or any name when it has none
   */
  models?: readonly string[];
  /** `owned_by` of the listed models. @default 'infergate' */
  ownedBy?: string;
  /** Where the routes live. @default '/v1' */
  prefix?: string;
  /** Largest JSON body read when no body parser ran. @default 1 MiB */
  limitBytes?: number;
  /**
   * Send a 5xx's own message to the client. By default it is logged with the request id
   * (`logError`) and the client reads a generic message naming that id, as from `errorHandler()`.
   * @default false
   */
  exposeInternalErrors?: boolean;
  /** Where a 5xx's message is logged, with the request id. @default one line on console.error */
  logError?: (entry: ErrorLogEntry) => void;
}

const optionsSchema = z.object({
  apiKeys: z
    .record(
      z.string().min(1),
      z.union([z.string().min(1), z.object({ tenant: z.string().min(1), id: z.string().min(1).optional() })]),
    )
    .optional(),
  defaultTenant: z.string().min(1).default('anonymous'),
  models: z.array(z.string().min(1)).optional(),
  ownedBy: z.string().min(1).default('infergate'),
  prefix: z
    .string()
    .regex(/^(\/[^/]+)*$/, "a path such as '/v1' (no trailing slash)")
    .default('/v1'),
  limitBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  exposeInternalErrors: z.boolean().default(false),
  logError: z
    .custom<(entry: ErrorLogEntry) => void>(
      (value) => typeof value === 'function',
      'logError must be a function',
    )
    .optional(),
});

interface Caller {
  tenant: string;
  keyId: string | undefined;
}

function bearer(request: HttpRequest): string | undefined {
  const value = request.headers.authorization;
  const match = typeof value === 'string' ? /^Bearer\s+(.+)$/i.exec(value.trim()) : null;
  return match?.[1];
}

function sse(response: HttpResponse, data: unknown): void {
  response.write(`data: ${JSON.stringify(data)}\n\n`);
}

/**
 * OpenAI's Chat Completions API in front of any infergate ChatModel — typically a chat router with
 * fallback, wrapped by `withCost` for budgets: `POST {prefix}/chat/completions` (JSON, or SSE with
 * `stream: true` and `stream_options.include_usage`), `GET {prefix}/models` and
 * `GET {prefix}/models/{id}`. Other paths go to `next()`. API keys map to tenants (CallOptions
 * `tenant`, and the key's id under @infergate/cost's key context); errors use OpenAI's body and
 * status codes (BUDGET_EXCEEDED is 429 `insufficient_quota`). A client that disconnects aborts the
 * call upstream.
 */
export function openAIRoutes(model: ChatModel, options: OpenAIRoutesOptions = {}): Handler {
  const settings = parseOptions(optionsSchema, options, 'openAIRoutes options');
  const models = settings.models ?? (model.defaultModel === undefined ? undefined : [model.defaultModel]);
  const created = Math.floor(Date.now() / 1000);
  const modelWire = (id: string) => ({ id, object: 'model' as const, created, owned_by: settings.ownedBy });
  const errorOptions = {
    exposeInternalErrors: settings.exposeInternalErrors,
    ...(settings.logError === undefined ? {} : { logError: settings.logError }),
  };

  function caller(request: HttpRequest): Caller {
    if (settings.apiKeys === undefined) return { tenant: settings.defaultTenant, keyId: undefined };
    const key = bearer(request);
    if (key === undefined) {
      throw new InfergateError(ErrorCode.Unauthenticated, 'no API key: send Authorization: Bearer <key>');
    }
    const owner = settings.apiKeys[key];
    if (owner === undefined)
      throw new InfergateError(ErrorCode.Unauthenticated, 'incorrect API key provided');
    const hashed = () => `key_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
    return typeof owner === 'string'
      ? { tenant: owner, keyId: hashed() }
      : { tenant: owner.tenant, keyId: owner.id ?? hashed() };
  }

  function checkModel(name: string): void {
    if (models !== undefined && !models.includes(name)) {
      throw new InfergateError(ErrorCode.NotFound, `The model '${name}' does not exist`, {
        details: { param: 'model' },
      });
    }
  }

  async function completions(
    request: HttpRequest,
    response: HttpResponse,
    signal: AbortSignal,
    who: Caller,
    requestId: string,
  ) {
    const body = parseChatCompletionBody(await readJsonBody(request, settings.limitBytes));
    checkModel(body.model);
    const chatRequest = chatRequestOf(body);
    const callOptions: CallOptions = withSlo(
      {
        signal,
        tenant: who.tenant,
        ...(who.keyId !== undefined ? { context: new Map([[API_KEY_CONTEXT, who.keyId]]) } : {}),
      },
      sloOfRequest(request),
    );
    const head: CompletionHead = {
      id: `chatcmpl-${randomUUID()}`,
      created: Math.floor(Date.now() / 1000),
      model: body.model,
    };
    if (body.stream !== true) {
      const answer = await model.chat(chatRequest, callOptions);
      response.statusCode = 200;
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      response.end(JSON.stringify(completionWire(head, answer.text, answer.finishReason, answer.usage)));
      return;
    }
    const includeUsage = body.stream_options?.include_usage === true;
    const events = model.chatStream(chatRequest, callOptions)[Symbol.asyncIterator]();
    try {
      // Nothing is written before the first event: a failure up to then (budget, every target
      // down) is still a proper HTTP error, and the router may fall back before it.
      let next = await events.next();
      response.statusCode = 200;
      response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      response.setHeader('Cache-Control', 'no-cache');
      response.setHeader('Connection', 'keep-alive');
      response.flushHeaders();
      sse(response, chunkWire(head, { role: 'assistant', content: '' }, null, includeUsage));
      let usage: ChatUsage | undefined;
      let finishReason: FinishReason = 'stop';
      try {
        while (!next.done) {
          const event = next.value;
          if (event.type === 'text-delta' && event.text !== '') {
            sse(response, chunkWire(head, { content: event.text }, null, includeUsage));
          } else if (event.type === 'usage') usage = event.usage;
          else if (event.type === 'finish') finishReason = event.finishReason;
          next = await events.next();
        }
      } catch (error) {
        // Headers are gone: OpenAI's clients read an `error` frame as the stream's failure.
        if (!signal.aborted) sse(response, openAIError(error, requestId, errorOptions).body);
        response.end();
        return;
      }
      sse(response, chunkWire(head, {}, finishReason, includeUsage));
      if (includeUsage) sse(response, usageChunkWire(head, usage));
      response.end('data: [DONE]\n\n');
    } finally {
      await events.return?.();
    }
  }

  const handler: Handler = (request, response, next) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    const prefix = settings.prefix;
    const isCompletions = path === `${prefix}/chat/completions`;
    const isModels = path === `${prefix}/models` || path.startsWith(`${prefix}/models/`);
    if (!isCompletions && !isModels) {
      next();
      return;
    }
    const requestId = randomUUID();
    response.setHeader('X-Request-Id', requestId);
    const controller = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) {
        controller.abort(new InfergateError(ErrorCode.Cancelled, 'the client disconnected', { requestId }));
      }
    });
    (async () => {
      const who = caller(request);
      const method = request.method ?? 'GET';
      if (isCompletions) {
        if (method !== 'POST') throw methodNotAllowed(method, path);
        await completions(request, response, controller.signal, who, requestId);
        return;
      }
      if (method !== 'GET') throw methodNotAllowed(method, path);
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      if (path === `${prefix}/models`) {
        response.end(JSON.stringify({ object: 'list', data: (models ?? []).map(modelWire) }));
        return;
      }
      const id = decodeURIComponent(path.slice(`${prefix}/models/`.length));
      checkModel(id);
      response.end(JSON.stringify(modelWire(id)));
    })().catch((error: unknown) => sendOpenAIError(response, error, requestId, errorOptions));
  };
  return handler;
}

function methodNotAllowed(method: string, path: string): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, `${method} is not allowed on ${path}`, {
    details: { responseStatus: 405 },
  });
}
