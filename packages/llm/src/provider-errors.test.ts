import { readFileSync } from 'node:fs';
import { ErrorCode } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { codeForHttpError, codeForStreamError, httpError, parseErrorBody } from './provider-errors.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const empty = { message: undefined, type: undefined, code: undefined };
const context = { provider: 'openai', secrets: ['sk-secret-key-1234'] };

describe('codeForHttpError', () => {
  it.each([
    [429, ErrorCode.RateLimited],
    [529, ErrorCode.Overloaded],
    [500, ErrorCode.Unavailable],
    [502, ErrorCode.Unavailable],
    [503, ErrorCode.Unavailable],
    [504, ErrorCode.Unavailable],
    [401, ErrorCode.Unauthenticated],
    [403, ErrorCode.PermissionDenied],
    [404, ErrorCode.NotFound],
    [400, ErrorCode.InvalidArgument],
    [422, ErrorCode.InvalidArgument],
    [408, ErrorCode.Unavailable],
    [409, ErrorCode.Aborted],
    [501, ErrorCode.Unimplemented],
  ])('maps HTTP %i to %s', (status, code) => {
    expect(codeForHttpError(status, empty)).toBe(code);
  });

  it("maps 503 'overloaded' to OVERLOADED", () => {
    const body = { ...empty, message: 'The engine is currently overloaded, please try again later.' };
    expect(codeForHttpError(503, body)).toBe(ErrorCode.Overloaded);
    expect(codeForHttpError(529, parseErrorBody(fixture('anthropic-error-overloaded.json')))).toBe(
      ErrorCode.Overloaded,
    );
  });

  it('recognises context-length errors of OpenAI, Anthropic and vLLM', () => {
    expect(codeForHttpError(400, parseErrorBody(fixture('openai-error-context-length.json')))).toBe(
      ErrorCode.ContextLengthExceeded,
    );
    expect(codeForHttpError(400, parseErrorBody(fixture('anthropic-error-prompt-too-long.json')))).toBe(
      ErrorCode.ContextLengthExceeded,
    );
    const vllm = {
      ...empty,
      message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
    };
    expect(codeForHttpError(400, vllm)).toBe(ErrorCode.ContextLengthExceeded);
  });

  it('recognises content-filter rejections', () => {
    expect(codeForHttpError(400, { ...empty, code: 'content_policy_violation' })).toBe(
      ErrorCode.ContentFiltered,
    );
    expect(codeForHttpError(400, { ...empty, code: 'content_filter' })).toBe(ErrorCode.ContentFiltered);
  });
});

describe('codeForStreamError', () => {
  it('maps Anthropic error event types', () => {
    expect(codeForStreamError({ ...empty, type: 'overloaded_error' })).toBe(ErrorCode.Overloaded);
    expect(codeForStreamError({ ...empty, type: 'rate_limit_error' })).toBe(ErrorCode.RateLimited);
    expect(codeForStreamError({ ...empty, type: 'api_error' })).toBe(ErrorCode.Unavailable);
    expect(codeForStreamError({ ...empty, type: 'something_new' })).toBe(ErrorCode.Unknown);
  });
});

describe('httpError', () => {
  it('carries status, retry-after, request id and backpressure', () => {
    const error = httpError(
      429,
      new Headers({ 'retry-after': '3', 'x-request-id': 'req_123' }),
      JSON.stringify({
        error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
      }),
      { ...context, model: 'gpt-4o' },
    );
    expect(error.code).toBe(ErrorCode.RateLimited);
    expect(error.httpStatus).toBe(429);
    expect(error.retryAfterMs).toBe(3000);
    expect(error.requestId).toBe('req_123');
    expect(error.retryable).toBe(true);
    expect(error.backpressure).toBe(true);
    expect(error.model).toBe('gpt-4o');
    expect(error.message).toContain('Rate limit reached');
  });

  it('treats insufficient_quota as not retryable', () => {
    const body = JSON.stringify({
      error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' },
    });
    const error = httpError(429, new Headers(), body, context);
    expect(error.code).toBe(ErrorCode.RateLimited);
    expect(error.retryable).toBe(false);
  });

  it('removes secrets the provider echoed, and survives non-JSON bodies', () => {
    const echoed = httpError(
      401,
      new Headers(),
      JSON.stringify({ error: { message: 'bad key sk-secret-key-1234' } }),
      context,
    );
    expect(echoed.message).not.toContain('sk-secret-key-1234');
    const html = httpError(502, new Headers(), '<html>Bad Gateway</html>', context);
    expect(html.code).toBe(ErrorCode.Unavailable);
    expect(html.message).toContain('Bad Gateway');
  });
});
