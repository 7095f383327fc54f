import { ErrorCode } from '@infergate/core';
import { createAnthropicChatModel, createOpenAIChatModel } from '@infergate/llm';
import { type FakeLlmServer, startFakeAnthropic, startFakeOpenAI } from '@infergate/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatRouter } from './chat-router.js';
import { createRateLimitWatch, parseRateLimitHeaders, parseResetDuration } from './rate-limit-watch.js';

const servers: FakeLlmServer[] = [];
const routers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((router) => router.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

/** A router over two fake OpenAI accounts; the primary's answers carry `headers`. */
async function openAIPair(headers: Record<string, string>) {
  const primary = await startFakeOpenAI({ responseHeaders: headers, reply: 'primary' });
  const secondary = await startFakeOpenAI({ reply: 'secondary' });
  servers.push(primary, secondary);
  const watch = createRateLimitWatch();
  const router = createChatRouter({
    targets: [
      {
        name: 'primary',
        model: createOpenAIChatModel({ apiKey: 'sk-test', baseURL: primary.url, fetch: watch.fetch }),
        rateLimits: watch,
      },
      { name: 'secondary', model: createOpenAIChatModel({ apiKey: 'sk-test', baseURL: secondary.url }) },
    ],
  });
  routers.push(router);
  return { router, primary, secondary, watch };
}

describe('rate-limit headers', () => {
  it('reads OpenAI reset durations', () => {
    expect(parseResetDuration('1s')).toBe(1_000);
    expect(parseResetDuration('6m0s')).toBe(360_000);
    expect(parseResetDuration('12ms')).toBe(12);
    expect(parseResetDuration('1h2m3.5s')).toBe(3_723_500);
    for (const garbled of ['', 'soon', '5 minutes', '-1s', '1x'])
      expect(parseResetDuration(garbled)).toBeUndefined();
  });

  it('reads both providers’ headers and leaves missing or garbled values undefined', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(
      parseRateLimitHeaders(
        headers({ 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-reset-tokens': '6m0s' }),
        now,
      ),
    ).toEqual({
      requestsRemaining: 59,
      tokensRemaining: undefined,
      requestsResetAt: undefined,
      tokensResetAt: now + 360_000,
    });
    expect(
      parseRateLimitHeaders(
        headers({
          'anthropic-ratelimit-requests-remaining': '0',
          'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:30Z',
        }),
        now,
      ),
    ).toMatchObject({ requestsRemaining: 0, requestsResetAt: now + 30_000 });
    expect(parseRateLimitHeaders(headers({}), now)).toBeUndefined();
    expect(
      parseRateLimitHeaders(
        headers({ 'x-ratelimit-remaining-requests': 'lots', 'x-ratelimit-reset-requests': 'whenever' }),
        now,
      ),
    ).toBeUndefined();
  });
});

describe('rate-limit foresight', () => {
  it('moves calls off an OpenAI account whose answer said no requests are left, before any 429', async () => {
    const { router, primary, secondary, watch } = await openAIPair({
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '60s',
    });
    expect((await router.chat(ask)).text).toBe('primary');
    // The reset the header announced (60 s), seen from now: a computed limit, not a measured time.
    const now = Date.now();
    expect(watch.limitedForMs(now)).toBeGreaterThan(50_000);
    for (let call = 0; call < 3; call++) expect((await router.chat(ask)).text).toBe('secondary');
    expect(primary.calls).toBe(1);
    expect(secondary.calls).toBe(3);
  });

  it('keeps using a target whose rate-limit headers are missing or garbled', async () => {
    const { router, primary, watch } = await openAIPair({
      'x-ratelimit-remaining-requests': 'none',
      'x-ratelimit-reset-requests': 'later',
    });
    for (let call = 0; call < 3; call++) expect((await router.chat(ask)).text).toBe('primary');
    expect(primary.calls).toBe(3);
    expect(watch.last).toBeUndefined();
  });

  it('reads Anthropic’s RFC 3339 resets: a past reset leaves the account in use, a future one moves calls off', async () => {
    let resetAt = new Date(Date.now() - 1_000).toISOString();
    const server = await startFakeAnthropic({
      responseHeaders: () => ({
        'anthropic-ratelimit-tokens-remaining': '0',
        'anthropic-ratelimit-tokens-reset': resetAt,
      }),
    });
    servers.push(server);
    const watch = createRateLimitWatch();
    const router = createChatRouter({
      targets: [
        {
          name: 'claude',
          model: createAnthropicChatModel({ apiKey: 'sk-ant-test', baseURL: server.url, fetch: watch.fetch }),
          rateLimits: watch,
        },
      ],
    });
    routers.push(router);
    const claude = {
      model: 'claude-3-5-haiku',
      messages: [{ role: 'user' as const, content: 'hi' }],
      maxTokens: 10,
    };
    await router.chat(claude);
    // No tokens left, but the reset is already behind: the account is used again.
    resetAt = new Date(Date.now() + 60_000).toISOString();
    await router.chat(claude);
    expect(server.calls).toBe(2);
    // Now the last answer says: none left for a minute. Every account spent: RESOURCE_EXHAUSTED.
    const error = await router.chat(claude).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: ErrorCode.ResourceExhausted, details: { reason: 'rate limited' } });
    expect((error as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(50_000);
    expect(server.calls).toBe(2);
  });

  it('rejects bad watch options with INVALID_ARGUMENT', () => {
    expect(() => createRateLimitWatch({ minRemainingRequests: -1 })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });
});
