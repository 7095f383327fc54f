import { isConnectivitySource } from '@infergate/core';
import {
  allValid,
  type Checked,
  type Fields,
  hasOnlyKeys,
  INVALID,
  isObject,
} from '@infergate/core/internal/option-checks';
import { BALANCE_STRATEGIES } from '../balance-strategy.js';
import type {
  ResolvedBreakerOptions,
  ResolvedChatRouterConfig,
  ResolvedRouterConfig,
  RouteNode,
} from '../config.js';
import { RateLimitWatch } from '../rate-limit-watch.js';
import { savedStatesOf } from './saved-states.js';

// Reads the routers' options as routerConfigSchema() and chatRouterConfigSchema() do, answering
// only "valid, resolved to this" or "not sure" (then the schema decides and words the error), so
// that a router made with valid options does not load zod. The rules are zod 4's, as in core's
// accept-client-options.ts; accept-router-options.property.test.ts holds this to the schemas.
// Decision 0025.

type Check = (value: unknown) => Checked<unknown>;
type Field = readonly [key: string, check: Check];

/** Checks made by `optional`: their key is left out of the result when the input lacks it. */
const OPTIONAL = new WeakSet<Check>();

/**
 * A strict object, its fields resolved in the order given (the schema's). An optional field appears
 * when the input has the key (also as `undefined`, read with `in`), any other field always.
 */
function strictObject(value: unknown, fields: readonly Field[], keys: ReadonlySet<string>): Checked<Fields> {
  if (!isObject(value) || !hasOnlyKeys(value, keys)) return INVALID;
  const resolved: Fields = {};
  for (const [key, check] of fields) {
    if (OPTIONAL.has(check) && !(key in value)) continue;
    const field = check(value[key]);
    if (field === INVALID) return INVALID;
    resolved[key] = field;
  }
  return resolved;
}

function object(fields: readonly Field[]): Check {
  const keys = new Set(fields.map(([key]) => key));
  return (value) => strictObject(value, fields, keys);
}

/** A field with `.default(fallback)`: the fallback (a fresh copy) when undefined, else `check`. */
const withDefault =
  (check: Check, fallback: () => unknown): Check =>
  (value) =>
    value === undefined ? fallback() : check(value);

/** A field with `.optional()`: undefined passes. */
function optional(check: Check): Check {
  const optionalCheck: Check = (value) => (value === undefined ? undefined : check(value));
  OPTIONAL.add(optionalCheck);
  return optionalCheck;
}

function number(min: number, max = Number.POSITIVE_INFINITY, above = false): Check {
  return (value) =>
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (above ? value > min : value >= min) &&
    value <= max
      ? value
      : INVALID;
}
const integer =
  (min: 0 | 1): Check =>
  (value) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= min ? value : INVALID;
const nonEmptyString: Check = (value) => (typeof value === 'string' && value.length >= 1 ? value : INVALID);
const boolean: Check = (value) => (typeof value === 'boolean' ? value : INVALID);
const oneOf =
  (allowed: readonly string[]): Check =>
  (value) =>
    allowed.includes(value as string) ? value : INVALID;
const isFunction: Check = (value) => (typeof value === 'function' ? value : INVALID);
const withMethods =
  (...methods: string[]): Check =>
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    methods.every((method) => typeof (value as Fields)[method] === 'function')
      ? value
      : INVALID;
const arrayOf =
  (check: Check): Check =>
  (value) => {
    if (!Array.isArray(value) || value.length < 1) return INVALID;
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      const element = check(value[index]);
      if (element === INVALID) return INVALID;
      copy[index] = element;
    }
    return copy;
  };

const fallbackStep = object([['fallback', (value) => arrayOf(routeNode)(value)]]);
const groupMember = object([
  ['route', (value) => routeNode(value)],
  ['weight', optional(number(0, Number.POSITIVE_INFINITY, true))],
]);
const groupStep = object([
  ['group', arrayOf(groupMember)],
  ['strategy', optional(oneOf(BALANCE_STRATEGIES))],
]);

/** The route union: a target name, a fallback chain, a group (the first that fits). */
function routeNode(value: unknown): Checked<unknown> {
  if (typeof value === 'string') return nonEmptyString(value);
  const fallback = fallbackStep(value);
  return fallback === INVALID ? groupStep(value) : fallback;
}

const BREAKER_FIELDS = [
  ['errorThresholdPercentage', number(0, 100), 50],
  ['volumeThreshold', integer(0), 5],
  ['consecutiveGatewayFailures', integer(0), 3],
  ['rollingWindowMs', integer(1), 10_000],
  ['rollingBuckets', integer(1), 10],
  ['openMs', number(0, Number.POSITIVE_INFINITY, true), 1_000],
  ['maxOpenMs', number(0, Number.POSITIVE_INFINITY, true), 60_000],
  ['openMultiplier', number(1), 2],
  ['openJitter', number(0, 1), 0.2],
  ['halfOpenMaxProbes', integer(1), 1],
  ['halfOpenSuccesses', integer(1), 1],
  ['probeIntervalMs', integer(1), 1_000],
] as const;

/**
 * `breakerOptionsSchema()`, every field defaulted. Its `.partial()` (the router-wide `breaker`)
 * resolves the same: in zod 4 an optional field whose schema has a default still takes the default
 * when the key is absent.
 */
const fullBreaker = object(
  BREAKER_FIELDS.map(([key, check, fallback]) => [key, withDefault(check, () => fallback)] as const),
);
const partialBreaker = fullBreaker;
/** A target's own `breaker`: the same checks, no defaults (the router-wide options fill the rest). */
const breakerOverrides = object(BREAKER_FIELDS.map(([key, check]) => [key, optional(check)] as const));

const retry = object([
  ['maxRetries', withDefault(integer(0), () => 2)],
  ['baseDelayMs', withDefault(number(0), () => 50)],
  ['maxDelayMs', withDefault(number(0), () => 2_000)],
  [
    'budget',
    withDefault(
      object([
        ['ratio', withDefault(number(0), () => 0.2)],
        ['minPerSecond', withDefault(number(0), () => 10)],
        ['windowMs', withDefault(integer(1), () => 10_000)],
      ]),
      () => ({ ratio: 0.2, minPerSecond: 10, windowMs: 10_000 }),
    ),
  ],
]);

const balance = object([
  ['strategy', withDefault(oneOf(BALANCE_STRATEGIES), () => 'weighted')],
  ['decayMs', withDefault(number(0, Number.POSITIVE_INFINITY, true), () => 1_000)],
]);

const admission = object([
  ['maxInFlight', optional(integer(1))],
  ['lowPriorityShare', withDefault(number(0, 1), () => 0.75)],
  ['minSamples', withDefault(integer(1), () => 5)],
]);

const hedge = object([
  [
    'delay',
    withDefault(
      (value) => (value === 'p95' ? value : number(0)(value)),
      () => 'p95',
    ),
  ],
  ['budget', withDefault(number(0, 1), () => 0.1)],
  ['windowMs', withDefault(integer(1), () => 10_000)],
]);

const affinity = object([
  ['key', optional(isFunction)],
  ['maxLoadFactor', optional(number(1))],
]);

/** The fields every router takes, in the schema's order (routerOptionsShape). */
const ROUTER_FIELDS: readonly Field[] = [
  ['name', withDefault(nonEmptyString, () => 'router')],
  ['tracing', withDefault(boolean, () => true)],
  ['route', optional(routeNode)],
  ['breaker', withDefault(partialBreaker, () => ({}))],
  [
    'retry',
    withDefault(retry, () => ({
      maxRetries: 2,
      baseDelayMs: 50,
      maxDelayMs: 2_000,
      budget: { ratio: 0.2, minPerSecond: 10, windowMs: 10_000 },
    })),
  ],
  ['attemptTimeoutMs', optional(integer(1))],
  ['whenAllOpen', withDefault(oneOf(['fail-fast', 'least-recently-failed']), () => 'fail-fast')],
  ['firstCooldownMs', withDefault(number(0), () => 10)],
  ['cooldownMs', withDefault(number(0), () => 1_000)],
  ['capacityWaitMs', withDefault(number(0), () => 2_000)],
  ['maxCooldownMs', withDefault(number(0), () => 60_000)],
  ['initialState', optional((value) => savedStatesOf(value) ?? INVALID)],
  ['balance', withDefault(balance, () => ({ strategy: 'weighted', decayMs: 1_000 }))],
  ['admission', withDefault(admission, () => ({ lowPriorityShare: 0.75, minSamples: 5 }))],
  ['hedge', optional(hedge)],
  ['random', optional(isFunction)],
  ['affinity', withDefault(affinity, () => ({}))],
];

const TARGET_FIELDS: readonly Field[] = [
  ['name', nonEmptyString],
  ['breaker', optional(breakerOverrides)],
  ['cost', optional(number(0))],
];

const tritonTarget = object([
  ...TARGET_FIELDS,
  ['transport', withMethods('infer', 'stream')],
  ['connectivity', optional((value) => (isConnectivitySource(value) ? value : INVALID))],
  [
    'probe',
    optional((value) =>
      typeof value === 'function'
        ? value
        : object([
            ['client', withMethods('serverReady')],
            ['model', optional(nonEmptyString)],
          ])(value),
    ),
  ],
]);

const chatTarget = object([
  ...TARGET_FIELDS,
  ['model', withMethods('chat', 'chatStream')],
  ['modelName', optional(nonEmptyString)],
  ['contextWindow', optional(integer(1))],
  ['rateLimits', optional((value) => (value instanceof RateLimitWatch ? value : INVALID))],
]);

const inferRouter = object([...ROUTER_FIELDS, ['targets', arrayOf(tritonTarget)]]);
const chatRouter = object([
  ...ROUTER_FIELDS,
  ['targets', arrayOf(chatTarget)],
  ['prices', optional(withMethods('lookup'))],
]);

function routeNames(node: RouteNode, into: string[]): string[] {
  if (typeof node === 'string') into.push(node);
  else if ('fallback' in node) for (const step of node.fallback) routeNames(step, into);
  else for (const member of node.group) routeNames(member.route, into);
  return into;
}

/** checkTargets (config.ts) as a yes/no: names unique, every route step names a target. */
function targetsAgree(resolved: Fields): boolean {
  const names = new Set<string>();
  for (const target of resolved.targets as { name: string }[]) {
    if (names.has(target.name)) return false;
    names.add(target.name);
  }
  const route = resolved.route as RouteNode | undefined;
  return route === undefined || routeNames(route, []).every((name) => names.has(name));
}

function accept(check: Check, input: unknown): Fields | undefined {
  const resolved = check(input);
  if (resolved === INVALID) return undefined;
  return allValid(resolved as Fields) && targetsAgree(resolved as Fields) ? (resolved as Fields) : undefined;
}

/** `createInferRouter` options resolved as routerConfigSchema() resolves them, or undefined when they may not be valid. */
export function acceptRouterOptions(input: unknown): ResolvedRouterConfig | undefined {
  return accept(inferRouter, input) as ResolvedRouterConfig | undefined;
}

/** `createChatRouter` options resolved as chatRouterConfigSchema() resolves them, or undefined. */
export function acceptChatRouterOptions(input: unknown): ResolvedChatRouterConfig | undefined {
  return accept(chatRouter, input) as ResolvedChatRouterConfig | undefined;
}

/** A breaker's full options (breakerOptionsSchema(), defaults filled), or undefined. */
export function acceptBreakerOptions(input: unknown): ResolvedBreakerOptions | undefined {
  const resolved = fullBreaker(input);
  return resolved === INVALID ? undefined : (resolved as ResolvedBreakerOptions);
}
