import { assertSafeHeaders } from '../header-values.js';
import type { ResolvedClientOptions } from '../options.js';
import {
  allValid,
  type Checked,
  type Fields,
  hasOnlyKeys,
  INVALID,
  isObject,
  recordOf,
} from './option-checks.js';

// Loading zod was most of a cold process's createTritonClient() (about 55 of 70–94 ms), paid by
// every serverless cold start for options that are nearly always valid. This reads the client
// options as clientOptionsSchema() does, but only ever answers "valid, and here they are resolved"
// or "not sure": on "not sure" the caller asks the zod schema, which then decides and words the
// error. So an error is zod's own by construction, and this file only has to be exact on what it
// accepts: the same inputs as the schema, resolved to the same value (defaults, key order, keys
// present with `undefined`). Each rule below mirrors zod 4's behaviour for the schema's parts
// (strict objects read keys with `in` and list unknown ones with for...in, records take own
// enumerable keys of plain objects only and skip `__proto__`, numbers are finite, integers safe).
// accept-client-options.property.test.ts holds this to the schema. Decision 0025.

/** The largest gRPC message: 2 GiB − 1. */
export const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

const CLIENT_KEYS = new Set([
  'url',
  'loadBalancing',
  'engine',
  'compression',
  'enableGpuIpc',
  'sharedMemory',
  'timeoutMs',
  'headers',
  'accessToken',
  'accessHeader',
  'tls',
  'keepalive',
  'maxMessageBytes',
  'tracing',
  'interceptors',
  'channelOptions',
]);
const SHARED_MEMORY_KEYS = new Set(['thresholdBytes', 'maxRegions', 'maxRegionBytes']);
const TLS_KEYS = new Set(['ca', 'cert', 'key', 'serverName']);
const KEEPALIVE_KEYS = new Set(['timeMs', 'timeoutMs', 'permitWithoutCalls']);
const ACCESS_TOKEN = /^[\t\x20-\x7e]*$/;

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1;
}

/** z.number().int().positive() (and .max(max)): finite, a safe integer, above 0. */
function isPositiveInteger(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= max;
}

function positiveInteger(value: unknown, fallback: number, max?: number): Checked<number> {
  if (value === undefined) return fallback;
  return isPositiveInteger(value, max) ? value : INVALID;
}

function boolean(value: unknown, fallback: boolean): Checked<boolean> {
  if (value === undefined) return fallback;
  return typeof value === 'boolean' ? value : INVALID;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): Checked<T> {
  if (value === undefined) return fallback;
  return allowed.includes(value as T) ? (value as T) : INVALID;
}

/** An array of at least `min` elements, each accepted by `accept`, copied. */
function arrayOf(value: unknown, accept: (element: unknown) => boolean, min: number): Checked<unknown[]> {
  if (!Array.isArray(value) || value.length < min) return INVALID;
  const copy: unknown[] = new Array(value.length);
  for (let index = 0; index < value.length; index++) {
    const element: unknown = value[index];
    if (!accept(element)) return INVALID;
    copy[index] = element;
  }
  return copy;
}

function url(value: unknown): Checked<string | unknown[] | undefined> {
  if (value === undefined || isNonEmptyString(value)) return value;
  return arrayOf(value, isNonEmptyString, 1);
}

function sharedMemory(value: unknown): Checked<Fields> {
  if (value === undefined) return { thresholdBytes: 1024 * 1024, maxRegions: 4, maxRegionBytes: 1024 ** 3 };
  if (!isObject(value)) return INVALID;
  const resolved = {
    thresholdBytes: positiveInteger(value.thresholdBytes, 1024 * 1024),
    maxRegions: positiveInteger(value.maxRegions, 4),
    maxRegionBytes: positiveInteger(value.maxRegionBytes, 1024 ** 3),
  };
  return Object.values(resolved).includes(INVALID) || !hasOnlyKeys(value, SHARED_MEMORY_KEYS)
    ? INVALID
    : resolved;
}

function timeoutMs(value: unknown): Checked<number | undefined> {
  return value === undefined || isPositiveInteger(value) ? value : INVALID;
}

function headers(value: unknown): Checked<Record<string, unknown>> {
  const resolved =
    value === undefined
      ? {}
      : recordOf(value, (element) => (typeof element === 'string' ? element : INVALID));
  if (resolved === INVALID) return INVALID;
  try {
    assertSafeHeaders(resolved as Record<string, string>);
  } catch {
    return INVALID;
  }
  return resolved;
}

function accessToken(value: unknown): Checked<string | undefined> {
  if (value === undefined) return undefined;
  return isNonEmptyString(value) && ACCESS_TOKEN.test(value) ? value : INVALID;
}

function accessHeader(value: unknown): Checked<string> {
  if (value === undefined) return 'triton-access-token';
  return isNonEmptyString(value) ? value : INVALID;
}

function isPem(value: unknown): boolean {
  return value === undefined || isNonEmptyString(value) || value instanceof Uint8Array;
}

function tls(value: unknown): Checked<boolean | Fields | undefined> {
  if (value === undefined || typeof value === 'boolean') return value;
  if (!isObject(value) || !hasOnlyKeys(value, TLS_KEYS)) return INVALID;
  const resolved: Fields = {};
  for (const key of ['ca', 'cert', 'key'] as const) {
    if (!(key in value)) continue;
    if (!isPem(value[key])) return INVALID;
    resolved[key] = value[key];
  }
  if ('serverName' in value) {
    if (value.serverName !== undefined && !isNonEmptyString(value.serverName)) return INVALID;
    resolved.serverName = value.serverName;
  }
  return resolved;
}

function keepalive(value: unknown): Checked<Fields> {
  if (value === undefined) return { timeMs: 30_000, timeoutMs: 10_000, permitWithoutCalls: false };
  if (!isObject(value)) return INVALID;
  const resolved = {
    timeMs: positiveInteger(value.timeMs, 30_000),
    timeoutMs: positiveInteger(value.timeoutMs, 10_000),
    permitWithoutCalls: boolean(value.permitWithoutCalls, false),
  };
  return Object.values(resolved).includes(INVALID) || !hasOnlyKeys(value, KEEPALIVE_KEYS)
    ? INVALID
    : resolved;
}

function interceptors(value: unknown): Checked<unknown[]> {
  if (value === undefined) return [];
  return arrayOf(value, (element) => typeof element === 'function', 0);
}

function channelOptions(value: unknown): Checked<Record<string, unknown>> {
  if (value === undefined) return {};
  return recordOf(value, (element) =>
    typeof element === 'string' || (typeof element === 'number' && Number.isFinite(element))
      ? element
      : INVALID,
  );
}

/**
 * The client options resolved exactly as `clientOptionsSchema()` resolves them, when they are
 * valid; undefined when they may not be (the schema then decides, and names what is wrong).
 */
export function acceptClientOptions(input: unknown): ResolvedClientOptions | undefined {
  if (!isObject(input) || !hasOnlyKeys(input, CLIENT_KEYS)) return undefined;
  // Keys in the schema's order, which is the order zod writes them in. Optional keys appear when
  // the input has them (also when `undefined`), defaulted ones always.
  const resolved: Fields = {};
  const optional = (key: string, check: (value: unknown) => unknown) => {
    if (key in input) resolved[key] = check(input[key]);
  };
  optional('url', url);
  resolved.loadBalancing = oneOf(input.loadBalancing, ['round_robin', 'pick_first'], 'round_robin');
  optional('engine', (value) =>
    value === undefined || value === 'grpc-js' || value === 'http2' ? value : INVALID,
  );
  resolved.compression = oneOf(input.compression, ['none', 'deflate', 'gzip'], 'none');
  resolved.enableGpuIpc = boolean(input.enableGpuIpc, true);
  resolved.sharedMemory = sharedMemory(input.sharedMemory);
  optional('timeoutMs', timeoutMs);
  resolved.headers = headers(input.headers);
  optional('accessToken', accessToken);
  resolved.accessHeader = accessHeader(input.accessHeader);
  optional('tls', tls);
  resolved.keepalive = keepalive(input.keepalive);
  resolved.maxMessageBytes = positiveInteger(input.maxMessageBytes, MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES);
  resolved.tracing = boolean(input.tracing, true);
  resolved.interceptors = interceptors(input.interceptors);
  resolved.channelOptions = channelOptions(input.channelOptions);
  return allValid(resolved) ? (resolved as ResolvedClientOptions) : undefined;
}
