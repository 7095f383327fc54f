import { parseOptions } from '@infergate/core';
import { z } from 'zod';
import type { FetchFunction } from './internal/http-request.js';

/** Options every HTTP adapter takes. */
export interface HttpChatModelOptions {
  /** The model used when a request names none. */
  defaultModel?: string;
  /** Largest context window in tokens, when known (the router's context-length fallback reads it). */
  contextWindow?: number;
  /** Deadline for each call, in ms (DEADLINE_EXCEEDED); a call's own `timeoutMs` wins. @default none */
  timeoutMs?: number;
  /** Extra HTTP headers on every request. */
  headers?: Readonly<Record<string, string>>;
  /** The fetch implementation. @default globalThis.fetch */
  fetch?: FetchFunction;
  /** Open an OpenTelemetry span per call (a no-op without a registered SDK). @default true */
  tracing?: boolean;
  /** Record prompt and completion text on spans (gen_ai.input/output.messages). @default false */
  captureContent?: boolean;
}

const optionsSchema = z.object({
  apiKey: z.string().min(1).optional(),
  baseURL: z.url().optional(),
  defaultModel: z.string().min(1).optional(),
  contextWindow: z.number().int().positive().optional(),
  timeoutMs: z.number().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  fetch: z
    .custom<FetchFunction>((value) => typeof value === 'function', 'fetch must be a function')
    .optional(),
  tracing: z.boolean().optional(),
  captureContent: z.boolean().optional(),
});

/** Validates the shared options (INVALID_ARGUMENT naming the bad ones); never echoes the API key. */
export function checkHttpOptions(options: object, what: string): void {
  parseOptions(optionsSchema, options, `${what} options`);
}

/** Strips the trailing slash so that `${base}/chat/completions` is right either way. */
export function baseUrl(value: string): string {
  return value.replace(/\/+$/, '');
}

/** The shared options as a wire module takes them, defaults filled in. */
export interface ResolvedHttpOptions {
  defaultModel: string | undefined;
  contextWindow: number | undefined;
  timeoutMs: number | undefined;
  fetch: FetchFunction;
  tracing: boolean;
  captureContent: boolean;
}

export function resolveHttpOptions(options: HttpChatModelOptions): ResolvedHttpOptions {
  return {
    defaultModel: options.defaultModel,
    contextWindow: options.contextWindow,
    timeoutMs: options.timeoutMs,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    tracing: options.tracing ?? true,
    captureContent: options.captureContent ?? false,
  };
}
