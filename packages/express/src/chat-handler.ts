import { InfergateError, parseOptions } from '@infergate/core';
import type { ChatRequest } from '@infergate/llm';
import { z } from 'zod';
import type { Gateway } from './gateway.js';
import { publicError, sendError } from './http-errors.js';
import type { Handler, HttpResponse } from './http-types.js';
import { contextOf } from './middleware.js';
import { readJsonBody } from './read-body.js';
import { requestIdOf } from './request-id.js';
import { withSlo } from './slo-header.js';

const chatBodySchema = z.object({
  model: z.string().min(1).optional(),
  messages: z
    .array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }))
    .min(1, 'messages must not be empty'),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  stop: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
});

export interface ChatHandlerOptions {
  /** Model when the body names none. */
  defaultModel?: string;
  /** Largest JSON body read when no body parser ran. @default 1 MiB */
  limitBytes?: number;
}

function sse(response: HttpResponse, event: string, data: unknown) {
  response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * `POST` a chat request `{ model?, messages, max_tokens?, temperature?, stop?, stream? }` to the
 * gateway's chat model (a router with fallback and cost, typically). With `stream: true` the answer is
 * Server-Sent Events: `text-delta`, `usage`, `finish`, then `done` (or `error`).
 */
export function chatHandler(options: ChatHandlerOptions = {}): Handler {
  const limit = options.limitBytes ?? 1024 * 1024;
  return (request, response) => {
    (async () => {
      const context = contextOf(request);
      const gateway = context.gateway as Gateway;
      if (gateway.chat === undefined) throw new Error('the gateway has no chat model');
      const body = parseOptions(chatBodySchema, await readJsonBody(request, limit), 'chat request');
      const model = body.model ?? options.defaultModel ?? gateway.chat.defaultModel;
      if (model === undefined)
        throw new InfergateError('INVALID_ARGUMENT', 'chat request: model is required');
      const chatRequest: ChatRequest = {
        model,
        messages: body.messages,
        ...(body.max_tokens !== undefined ? { maxTokens: body.max_tokens } : {}),
        ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        ...(body.stop !== undefined ? { stop: body.stop } : {}),
      };
      const callOptions = withSlo({ signal: context.signal, tenant: context.tenant }, context.slo);
      if (!body.stream) {
        const answer = await gateway.chat.chat(chatRequest, callOptions);
        response.statusCode = 200;
        response.setHeader('Content-Type', 'application/json; charset=utf-8');
        response.end(
          JSON.stringify(answer, (_key, value) => (typeof value === 'bigint' ? value.toString() : value)),
        );
        return;
      }
      const events = gateway.chat.chatStream(chatRequest, callOptions)[Symbol.asyncIterator]();
      // Nothing is sent before the first event, so an early failure is still a proper HTTP error.
      let next = await events.next();
      response.statusCode = 200;
      response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      response.setHeader('Cache-Control', 'no-cache');
      response.setHeader('Connection', 'keep-alive');
      response.flushHeaders();
      try {
        while (!next.done) {
          sse(response, next.value.type, next.value);
          next = await events.next();
        }
        sse(response, 'done', {});
      } catch (error) {
        // Same rules as an HTTP answer: a 5xx's own message is logged, not sent.
        if (!context.signal.aborted)
          sse(response, 'error', publicError(error, context.requestId, context.errors).body);
      } finally {
        await events.return?.();
        response.end();
      }
    })().catch((error) => sendError(response, error, requestIdOf(request), request.infergate?.errors));
  };
}
