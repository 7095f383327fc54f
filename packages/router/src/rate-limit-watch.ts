import { parseOptions } from '@infergate/core';
import type * as Zod from 'zod';
import type { z } from 'zod';
import { acceptRateLimitWatchOptions } from './internal/accept-rate-limit-watch-options.js';
import { loadZod } from './internal/load-zod.js';

/** What a provider's last answer said about its rate limits; a field is undefined when not said. */
export interface RateLimitSnapshot {
  requestsRemaining: number | undefined;
  tokensRemaining: number | undefined;
  /** When the request limit resets (epoch ms). */
  requestsResetAt: number | undefined;
  /** When the token limit resets (epoch ms). */
  tokensResetAt: number | undefined;
}

const DURATION =
  /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/;

/** OpenAI's reset durations ("1s", "6m0s", "12ms", "1h2m3.5s") in ms; undefined when garbled. */
export function parseResetDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (match === null || text.trim() === '') return undefined;
  const [, hours, minutes, seconds, millis] = match;
  return (
    Number(hours ?? 0) * 3_600_000 +
    Number(minutes ?? 0) * 60_000 +
    Number(seconds ?? 0) * 1_000 +
    Number(millis ?? 0)
  );
}

function count(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

function instant(value: string | null): number | undefined {
  if (value === null) return undefined;
  const at = Date.parse(value.trim());
  return Number.isFinite(at) ? at : undefined;
}

/**
 * Reads the rate-limit headers of an answer. OpenAI (and compatible servers):
 * `x-ratelimit-remaining-requests`, `x-ratelimit-remaining-tokens`, `x-ratelimit-reset-requests`,
 * `x-ratelimit-reset-tokens` (durations). Anthropic: `anthropic-ratelimit-requests-remaining`,
 * `anthropic-ratelimit-tokens-remaining` (else `-input-tokens-remaining`), and their `-reset`
 * (RFC 3339 instants). Missing or garbled values are left undefined; undefined when none is usable.
 */
export function parseRateLimitHeaders(
  headers: { get(name: string): string | null },
  now: number,
): RateLimitSnapshot | undefined {
  const after = (value: string | null) => {
    if (value === null) return undefined;
    const ms = parseResetDuration(value);
    return ms === undefined ? undefined : now + ms;
  };
  const snapshot: RateLimitSnapshot = {
    requestsRemaining:
      count(headers.get('x-ratelimit-remaining-requests')) ??
      count(headers.get('anthropic-ratelimit-requests-remaining')),
    tokensRemaining:
      count(headers.get('x-ratelimit-remaining-tokens')) ??
      count(headers.get('anthropic-ratelimit-tokens-remaining')) ??
      count(headers.get('anthropic-ratelimit-input-tokens-remaining')),
    requestsResetAt:
      after(headers.get('x-ratelimit-reset-requests')) ??
      instant(headers.get('anthropic-ratelimit-requests-reset')),
    tokensResetAt:
      after(headers.get('x-ratelimit-reset-tokens')) ??
      instant(headers.get('anthropic-ratelimit-tokens-reset')) ??
      instant(headers.get('anthropic-ratelimit-input-tokens-reset')),
  };
  return Object.values(snapshot).every((value) => value === undefined) ? undefined : snapshot;
}

function buildWatchSchema(z: typeof Zod.z) {
  return z
    .object({
      /** The fetch the watch wraps. @default globalThis.fetch */
      fetch: z
        .custom<typeof globalThis.fetch>((value) => typeof value === 'function', 'fetch must be a function')
        .optional(),
      /** A target with fewer requests left than this before its reset is avoided. @default 1 */
      minRemainingRequests: z.number().int().nonnegative().default(1),
      /** A target with fewer tokens left than this before its reset is avoided. @default 1 */
      minRemainingTokens: z.number().int().nonnegative().default(1),
    })
    .strict();
}

let watchSchema: ReturnType<typeof buildWatchSchema> | undefined;

/** The options schema; zod loads on first use (valid options are read without it, decision 0025). */
export function rateLimitWatchSchema(): ReturnType<typeof buildWatchSchema> {
  watchSchema ??= buildWatchSchema(loadZod());
  return watchSchema;
}

// An interface, not a type alias, so that the API reference lists every field.
export interface RateLimitWatchOptions extends z.input<ReturnType<typeof buildWatchSchema>> {}

/**
 * Rate-limit foresight for one provider account: hand `watch.fetch` to the chat adapter
 * (`createOpenAIChatModel({ fetch: watch.fetch })`) and the watch to the router target
 * (`{ name, model, rateLimits: watch }`). Every answer's rate-limit headers update it; while the
 * last answer said the requests or tokens left are under the minimum and the reset is ahead, the
 * router sends calls elsewhere instead of waiting for the 429.
 */
export class RateLimitWatch {
  readonly fetch: typeof globalThis.fetch;
  #last: RateLimitSnapshot | undefined;
  readonly #minRequests: number;
  readonly #minTokens: number;

  constructor(options: RateLimitWatchOptions = {}) {
    const parsed =
      acceptRateLimitWatchOptions(options) ??
      parseOptions(rateLimitWatchSchema(), options, 'rate-limit watch options');
    const inner = parsed.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#minRequests = parsed.minRemainingRequests;
    this.#minTokens = parsed.minRemainingTokens;
    this.fetch = async (input, init) => {
      const response = await inner(input, init);
      const snapshot = parseRateLimitHeaders(response.headers, Date.now());
      if (snapshot !== undefined) this.#last = snapshot;
      return response;
    };
  }

  /** The last usable snapshot; undefined before any answer carried the headers. */
  get last(): RateLimitSnapshot | undefined {
    return this.#last;
  }

  /** Milliseconds until the account has room again, or 0 when it has room (or nothing is known). */
  limitedForMs(now: number): number {
    const last = this.#last;
    if (last === undefined) return 0;
    let wait = 0;
    const short = (left: number | undefined, min: number, resetAt: number | undefined) =>
      left !== undefined && left < min && resetAt !== undefined && resetAt > now;
    if (short(last.requestsRemaining, this.#minRequests, last.requestsResetAt))
      wait = Math.max(wait, (last.requestsResetAt as number) - now);
    if (short(last.tokensRemaining, this.#minTokens, last.tokensResetAt))
      wait = Math.max(wait, (last.tokensResetAt as number) - now);
    return wait;
  }
}

/** Validates `options` and builds a rate-limit watch. */
export function createRateLimitWatch(options: RateLimitWatchOptions = {}): RateLimitWatch {
  return new RateLimitWatch(options);
}
