import { microBatcherOptionsSchema } from '@infergate/batcher';
import {
  breakerOptionsSchema,
  chatRouterConfigSchema,
  createRateLimitWatch,
  routerConfigSchema,
} from '@infergate/router';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptMicroBatcherOptions } from '../../packages/batcher/src/internal/accept-micro-batcher-options.js';
import { breakerSnapshotSchema } from '../../packages/router/src/breaker-state.js';
import { acceptBreakerSnapshot } from '../../packages/router/src/internal/accept-breaker-snapshot.js';
import {
  acceptBreakerOptions,
  acceptChatRouterOptions,
  acceptRouterOptions,
} from '../../packages/router/src/internal/accept-router-options.js';
import { expectSameValue } from '../support/expect-same-value.js';

// Decision 0025's hand checks (batcher, router, breaker, saved breaker state) held to their zod
// schemas once more, from the other side: each property test of a package generates every field
// (see accept-*.property.test.ts); this one starts from options that name every field validly,
// nested objects and arrays included, and then remakes them at random places in the shapes a
// caller might hand over: class instances, null prototypes, everything inherited, getters, frozen
// objects, an own `__proto__`, hidden and symbol keys, records made by odd constructors, arrays or
// functions where an object goes, holes in arrays, and numbers at their edges (−0, NaN, ±Infinity,
// 2^53, MIN_VALUE, a boxed number, a bigint, a numeric string). Whatever comes out, the hand
// check must accept exactly what the schema accepts and resolve it to the same value.

class Box {}

function madeBy(prototype: object, fields: object): object {
  function Maker(this: object) {
    Object.assign(this, fields);
  }
  Object.defineProperty(prototype, 'constructor', { value: Maker, writable: true, configurable: true });
  Maker.prototype = prototype;
  return new (Maker as unknown as new () => object)();
}

const NUMBER_EDGES: unknown[] = [
  0,
  -0,
  -1,
  0.5,
  1,
  1.5,
  100,
  100.5,
  2 ** 53 - 1,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  new Number(5),
  5n,
  '5',
];

type Remake = (value: Record<string, unknown>) => unknown;

/** The shapes an object may be remade in (the first keeps it as it is). */
const OBJECT_REMAKES: Remake[] = [
  (value) => value,
  (value) => Object.assign(new Box(), value),
  (value) => Object.assign(Object.create(null), value),
  (value) => Object.create(value),
  (value) => {
    const made = {};
    for (const key of Object.keys(value))
      Object.defineProperty(made, key, { get: () => value[key], enumerable: true, configurable: true });
    return made;
  },
  (value) => Object.freeze({ ...value }),
  (value) =>
    Object.assign(
      Object.defineProperty({}, '__proto__', {
        value: {},
        enumerable: true,
        writable: true,
        configurable: true,
      }),
      value,
    ),
  (value) => Object.defineProperty({ ...value }, 'hidden', { value: 1, enumerable: false }),
  (value) => Object.assign({ ...value }, { [Symbol('key')]: 1 }),
  (value) => madeBy(Object.assign([], { isPrototypeOf: Object.prototype.isPrototypeOf }), value),
  (value) => madeBy({ isPrototypeOf: Object.prototype.isPrototypeOf }, value),
  (value) => Object.assign([], value),
  (value) => {
    const made = () => undefined;
    for (const [key, field] of Object.entries(value))
      Object.defineProperty(made, key, {
        value: field,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return made;
  },
  (value) => ({ ...value, colour: 'red' }),
  (value) => {
    const { [Object.keys(value)[0] ?? '']: _dropped, ...rest } = value;
    return rest;
  },
  (value) => ({ ...value, [Object.keys(value)[0] ?? 'x']: undefined }),
];

/** Things passed through as given (transports, models, functions, watches): never remade. */
function isOpaque(value: object): boolean {
  return (
    typeof value === 'function' ||
    typeof (value as { infer?: unknown }).infer === 'function' ||
    typeof (value as { chat?: unknown }).chat === 'function' ||
    typeof (value as { serverReady?: unknown }).serverReady === 'function' ||
    typeof (value as { watchConnectivity?: unknown }).watchConnectivity === 'function' ||
    typeof (value as { lookup?: unknown }).lookup === 'function' ||
    typeof (value as { modelConfig?: unknown }).modelConfig === 'function' ||
    typeof (value as { fetch?: unknown }).fetch === 'function'
  );
}

/** Remakes `value` at the places `tape` picks: each object, array and number met is remade at `rate` (per mille). */
function remake(value: unknown, tape: number[], rate: number, depth = 0): unknown {
  const next = () => tape.shift() ?? 0;
  const pick = (count: number) => (next() % 1000 < rate ? next() % count : -1);
  if (typeof value === 'number') {
    const choice = pick(NUMBER_EDGES.length);
    return choice < 0 ? value : NUMBER_EDGES[choice];
  }
  if (typeof value !== 'object' || value === null || isOpaque(value) || depth > 8) return value;
  if (Array.isArray(value)) {
    const copy = value.map((element) => remake(element, tape, rate, depth + 1));
    const choice = pick(3);
    if (choice === 0) return Object.assign(new Array(copy.length + 1), copy); // a hole at the end
    if (choice === 1) return [];
    if (choice === 2) return Object.assign({}, copy); // an object with index keys
    return copy;
  }
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) copy[key] = remake(field, tape, rate, depth + 1);
  const choice = pick(OBJECT_REMAKES.length);
  return choice < 0 ? copy : (OBJECT_REMAKES[choice] as Remake)(copy);
}

interface Schema {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false };
}

function agree(schema: Schema, accept: (input: unknown) => unknown, base: () => unknown) {
  const seen = { accepted: 0, refused: 0 };
  fc.assert(
    fc.property(
      fc.constantFrom(10, 30, 100, 300),
      fc.array(fc.noBias(fc.nat()), { minLength: 400, maxLength: 400 }),
      (rate, tape) => {
        const input = remake(base(), tape, rate);
        const oracle = schema.safeParse(input);
        const accepted = accept(input);
        expect(accepted !== undefined, 'accepted exactly what the schema accepts').toBe(oracle.success);
        if (oracle.success) expectSameValue(accepted, oracle.data);
        seen[oracle.success ? 'accepted' : 'refused'] += 1;
      },
    ),
    { numRuns: 3000 },
  );
  // Both sides met often enough for the comparison to mean something.
  expect(seen.accepted).toBeGreaterThan(100);
  expect(seen.refused).toBeGreaterThan(100);
}

const transport = { infer: async () => ({}), stream: () => undefined };
const chatModel = { chat: async () => ({}), chatStream: () => undefined };
const breaker = () => ({
  errorThresholdPercentage: 40,
  volumeThreshold: 3,
  consecutiveGatewayFailures: 2,
  rollingWindowMs: 5_000,
  rollingBuckets: 5,
  openMs: 200,
  maxOpenMs: 10_000,
  openMultiplier: 1.5,
  openJitter: 0.1,
  halfOpenMaxProbes: 2,
  halfOpenSuccesses: 2,
  probeIntervalMs: 500,
});
const snapshot = () => ({ version: 1, state: { kind: 'open', trips: 2, openedAt: 10, halfOpenAt: 20 } });
const common = () => ({
  name: 'r',
  tracing: false,
  route: { fallback: ['a', { group: [{ route: 'b', weight: 2 }, { route: 'a' }], strategy: 'p2c-ewma' }] },
  breaker: breaker(),
  retry: {
    maxRetries: 1,
    baseDelayMs: 10,
    maxDelayMs: 100,
    budget: { ratio: 0.5, minPerSecond: 1, windowMs: 1000 },
  },
  attemptTimeoutMs: 100,
  whenAllOpen: 'least-recently-failed',
  firstCooldownMs: 5,
  cooldownMs: 50,
  capacityWaitMs: 0,
  maxCooldownMs: 1000,
  initialState: { a: snapshot() },
  balance: { strategy: 'least-in-flight', decayMs: 500 },
  admission: { maxInFlight: 4, lowPriorityShare: 0.5, minSamples: 2 },
  hedge: { delay: 5, budget: 0.2, windowMs: 1000 },
  random: () => 0.5,
  affinity: { key: () => 'k', maxLoadFactor: 1.25 },
});

describe('hand checks against their schemas, over options remade in odd shapes', () => {
  it('routerConfigSchema()', () => {
    agree(routerConfigSchema(), acceptRouterOptions, () => ({
      ...common(),
      targets: [
        {
          name: 'a',
          breaker: { openMs: 50, halfOpenSuccesses: 3 },
          cost: 0.001,
          transport,
          connectivity: { watchConnectivity: () => () => undefined, connectivityState: () => 'ready' },
          probe: { client: { serverReady: async () => true }, model: 'm' },
        },
        { name: 'b', transport, probe: async () => true },
      ],
    }));
  });

  it('chatRouterConfigSchema()', () => {
    const rateLimits = createRateLimitWatch();
    agree(chatRouterConfigSchema(), acceptChatRouterOptions, () => ({
      ...common(),
      targets: [
        {
          name: 'a',
          breaker: { volumeThreshold: 9 },
          cost: 0,
          model: chatModel,
          modelName: 'gpt',
          contextWindow: 8192,
          rateLimits,
        },
        { name: 'b', model: chatModel },
      ],
      prices: { lookup: () => undefined },
    }));
  });

  it('breakerOptionsSchema()', () => {
    agree(breakerOptionsSchema(), acceptBreakerOptions, breaker);
  });

  it('a saved breaker state', () => {
    agree(breakerSnapshotSchema(), acceptBreakerSnapshot, () => ({ ...snapshot(), lastFailureAt: 5 }));
    agree(breakerSnapshotSchema(), acceptBreakerSnapshot, () => ({
      version: 1,
      state: { kind: 'closed', trips: 0, closedAt: 3 },
    }));
  });

  it('microBatcherOptionsSchema()', () => {
    agree(microBatcherOptionsSchema(), acceptMicroBatcherOptions, () => ({
      maxBatchSize: 8,
      maxQueueDelayMs: 2,
      flush: 'fixed',
      serverBatching: 'defer',
      statsIntervalMs: 500,
      getModelStatistics: async () => ({ requests: 0, executions: 0, queueUs: 0, computeUs: 0 }),
      maxInFlightBatches: 3,
      maxQueueSize: 100,
      maxQueueWaitMs: 50,
      maxQueueBytes: 1 << 20,
      tenants: { gold: { weight: 3 }, free: { weight: 0.5 } },
      priorityLevels: 2,
      models: { resnet: { maxBatchSize: 16 }, bert: { maxBatchSize: 0 } },
      getModelConfig: async () => ({ maxBatchSize: 4 }),
      client: { modelConfig: async () => ({ maxBatchSize: 4 }) },
      maxBisectRpcs: 4,
      tracing: false,
    }));
  });
});
