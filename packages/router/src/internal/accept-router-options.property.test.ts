import { InfergateError, parseOptions } from '@infergate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectSameValue } from '../../../../test/support/expect-same-value.js';
import { BALANCE_STRATEGIES } from '../balance-strategy.js';
import { breakerSnapshotSchema } from '../breaker-state.js';
import { breakerOptionsSchema, chatRouterConfigSchema, routerConfigSchema } from '../config.js';
import { RateLimitWatch, rateLimitWatchSchema } from '../rate-limit-watch.js';
import { acceptBreakerSnapshot } from './accept-breaker-snapshot.js';
import { acceptRateLimitWatchOptions } from './accept-rate-limit-watch-options.js';
import {
  acceptBreakerOptions,
  acceptChatRouterOptions,
  acceptRouterOptions,
} from './accept-router-options.js';

// The zod schemas are the oracle, as for core's client options (accept-client-options.property.test.ts):
// each hand-written acceptance must accept exactly what its schema accepts, resolved to the same
// value, and the routers must fail exactly as parseOptions with the schema does.

const junk = fc.constantFrom<unknown>(
  undefined,
  null,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  0,
  -0,
  -1,
  0.5,
  1,
  1.5,
  2 ** 53,
  '',
  'x',
  'p95',
  true,
  [],
  {},
  { a: 1 },
  Object.create(null),
  new Map(),
  () => undefined,
  Symbol('s'),
  10n,
);
const either = <T>(valid: fc.Arbitrary<T>, wrong: fc.Arbitrary<unknown> = junk) =>
  fc.oneof(
    { weight: 30, arbitrary: valid },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.oneof(wrong, junk) },
  );
const edges = fc.constantFrom(0, -0, -1, 0.5, 1, 1.5, 100, 101, 2 ** 53, Number.MAX_VALUE, Number.MIN_VALUE);
const number = (min: number, max = 1e6) =>
  either(
    fc.oneof(fc.double({ min, max, noNaN: true }), fc.constantFrom(min, max)),
    fc.oneof(edges, fc.double()),
  );
const integer = (min: 0 | 1) =>
  either(fc.oneof(fc.integer({ min, max: 100_000 }), fc.constant(min)), fc.oneof(edges, fc.double()));
const aFunction = fc.constant(() => 0.5);

function withSymbolKey(value: object): object {
  return Object.assign({ ...value }, { [Symbol('key')]: 1 });
}
/** A strict object of optional `fields`, sometimes with a key it does not know, own or inherited. */
function strictObject(fields: Record<string, fc.Arbitrary<unknown>>, requiredKeys: string[] = []) {
  const object = fc.record(fields, { requiredKeys });
  return fc.oneof(
    { weight: 30, arbitrary: object },
    object.map((value) => ({ ...value, colour: 'red' })),
    object.map((value) => Object.assign(Object.create({ inherited: 1 }), value)),
    object.map((value) => Object.create(value)),
    object.map(withSymbolKey),
  );
}

const transport = { infer: async () => ({}), stream: () => undefined };
const chatModel = { chat: async () => ({}), chatStream: () => undefined };
const names = fc.constantFrom('a', 'b', 'c');

const breakerFields = {
  errorThresholdPercentage: number(0, 100),
  volumeThreshold: integer(0),
  consecutiveGatewayFailures: integer(0),
  rollingWindowMs: integer(1),
  rollingBuckets: integer(1),
  openMs: number(Number.MIN_VALUE),
  maxOpenMs: number(Number.MIN_VALUE),
  openMultiplier: number(1),
  openJitter: number(0, 1),
  halfOpenMaxProbes: integer(1),
  halfOpenSuccesses: integer(1),
  probeIntervalMs: integer(1),
};
const budgetFields = { ratio: number(0), minPerSecond: number(0), windowMs: integer(1) };
const retryFields = {
  maxRetries: integer(0),
  baseDelayMs: number(0),
  maxDelayMs: number(0),
  budget: either(strictObject(budgetFields)),
};
const balanceFields = {
  strategy: either(fc.constantFrom(...BALANCE_STRATEGIES), fc.constant('random')),
  decayMs: number(Number.MIN_VALUE),
};
const admissionFields = { maxInFlight: integer(1), lowPriorityShare: number(0, 1), minSamples: integer(1) };
const hedgeFields = {
  delay: either(fc.oneof(fc.constant('p95'), fc.double({ min: 0, max: 1e4, noNaN: true }))),
  budget: number(0, 1),
  windowMs: integer(1),
};
const affinityFields = { key: either(aFunction), maxLoadFactor: number(1) };

const route = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: either(names, fc.constantFrom('', 'z')) },
    strictObject({ fallback: either(fc.array(tie('node'), { maxLength: 3 }), fc.constant([])) }, [
      'fallback',
    ]),
    strictObject(
      {
        group: either(
          fc.array(strictObject({ route: tie('node'), weight: number(Number.MIN_VALUE) }, ['route']), {
            maxLength: 3,
          }),
          fc.constant([]),
        ),
        strategy: either(fc.constantFrom(...BALANCE_STRATEGIES)),
      },
      ['group'],
    ),
  ),
})).node;

const routerFields = {
  name: either(fc.constantFrom('router', 'r1'), fc.constant('')),
  tracing: either(fc.boolean()),
  route,
  breaker: either(strictObject(breakerFields)),
  retry: either(strictObject(retryFields)),
  attemptTimeoutMs: integer(1),
  whenAllOpen: either(fc.constantFrom('fail-fast', 'least-recently-failed'), fc.constant('wait')),
  firstCooldownMs: number(0),
  cooldownMs: number(0),
  capacityWaitMs: number(0),
  maxCooldownMs: number(0),
  initialState: either(
    fc.dictionary(names, fc.oneof(fc.constant({ version: 1 }), fc.constant(null), junk), { maxKeys: 2 }),
    fc.constant(withSymbolKey({})),
  ),
  balance: either(strictObject(balanceFields)),
  admission: either(strictObject(admissionFields)),
  hedge: either(strictObject(hedgeFields)),
  random: either(aFunction),
};
const targetFields = {
  name: either(names, fc.constant('')),
  breaker: either(strictObject(breakerFields)),
  cost: number(0),
};
const connectivity = { watchConnectivity: () => () => undefined, connectivityState: () => 'ready' };
const tritonTargetFields = {
  ...targetFields,
  transport: either(
    fc.constantFrom(transport, Object.assign([], transport)),
    fc.constant({ infer: () => 0 }),
  ),
  connectivity: either(fc.constant(connectivity), fc.constant({ watchConnectivity: () => 0 })),
  probe: either(
    fc.oneof(
      aFunction,
      strictObject(
        {
          client: either(fc.constant({ serverReady: async () => true }), fc.constant({})),
          model: either(fc.constant('m'), fc.constant('')),
        },
        ['client'],
      ),
    ),
  ),
};
const chatTargetFields = {
  ...targetFields,
  model: either(fc.constant(chatModel), fc.constant({ chat: () => 0 })),
  modelName: either(fc.constant('gpt'), fc.constant('')),
  contextWindow: integer(1),
  rateLimits: either(fc.constant(new RateLimitWatch())),
};
const targets = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  either(fc.array(strictObject(fields, ['name']), { minLength: 1, maxLength: 3 }), fc.constant([]));
const inferFields = {
  ...routerFields,
  affinity: either(strictObject(affinityFields)),
  targets: targets(tritonTargetFields),
};
const chatFields = {
  ...routerFields,
  affinity: either(strictObject(affinityFields)),
  targets: targets(chatTargetFields),
  prices: either(fc.constant({ lookup: () => undefined }), fc.constant({})),
};

interface Schema {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false };
}

function expectAgreement(schema: Schema, accept: (input: unknown) => unknown, input: unknown): void {
  const oracle = schema.safeParse(input);
  const accepted = accept(input);
  expect(accepted !== undefined, 'accepted exactly what the schema accepts').toBe(oracle.success);
  if (oracle.success) expectSameValue(accepted, oracle.data);
}

function errorOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('router options without zod', () => {
  it('generates every field of the schemas, so that a new one is held to them too', () => {
    const shape = routerConfigSchema().shape;
    expect(Object.keys(inferFields)).toEqual(Object.keys(shape));
    expect(Object.keys(chatFields)).toEqual(Object.keys(chatRouterConfigSchema().shape));
    expect(Object.keys(breakerFields)).toEqual(Object.keys(breakerOptionsSchema().shape));
    const retry = shape.retry.unwrap().shape;
    expect(Object.keys(retryFields)).toEqual(Object.keys(retry));
    expect(Object.keys(budgetFields)).toEqual(Object.keys(retry.budget.unwrap().shape));
    expect(Object.keys(balanceFields)).toEqual(Object.keys(shape.balance.unwrap().shape));
    expect(Object.keys(admissionFields)).toEqual(Object.keys(shape.admission.unwrap().shape));
    expect(Object.keys(hedgeFields)).toEqual(Object.keys(shape.hedge.unwrap().shape));
    expect(Object.keys(affinityFields)).toEqual(Object.keys(shape.affinity.unwrap().shape));
    expect(Object.keys(tritonTargetFields)).toEqual(Object.keys(shape.targets.element.shape));
    expect(Object.keys(chatTargetFields)).toEqual(
      Object.keys(chatRouterConfigSchema().shape.targets.element.shape),
    );
    const probe = shape.targets.element.shape.probe.unwrap().options[1];
    expect(Object.keys(tritonTargetFields.probe ? { client: 0, model: 0 } : {})).toEqual(
      Object.keys(probe.shape),
    );
  });

  it('accepts what routerConfigSchema() accepts, resolved to the same value, and fails as it does', () => {
    const options = fc.oneof({ weight: 20, arbitrary: strictObject(inferFields, ['targets']) }, junk);
    fc.assert(
      fc.property(options, (input) => {
        expectAgreement(routerConfigSchema(), acceptRouterOptions, input);
        if (acceptRouterOptions(input) === undefined) {
          const error = errorOf(() => parseOptions(routerConfigSchema(), input, 'router config'));
          expect(error).toBeInstanceOf(InfergateError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees at the edges of every number and enum, one field at a time on a valid router', () => {
    const values: unknown[] = [
      0,
      -0,
      -1,
      0.5,
      1,
      1.5,
      100,
      100.5,
      2 ** 53,
      Number.NaN,
      Infinity,
      '',
      'p95',
      null,
    ];
    const target = (extra: object) => ({ name: 'a', transport, ...extra });
    const places: ((value: unknown) => object)[] = [
      ...Object.keys(breakerFields).map((key) => (value: unknown) => ({ breaker: { [key]: value } })),
      ...Object.keys(breakerFields).map((key) => (value: unknown) => ({
        targets: [target({ breaker: { [key]: value } })],
      })),
      ...['maxRetries', 'baseDelayMs', 'maxDelayMs'].map((key) => (value: unknown) => ({
        retry: { [key]: value },
      })),
      ...Object.keys(budgetFields).map((key) => (value: unknown) => ({
        retry: { budget: { [key]: value } },
      })),
      ...[
        'attemptTimeoutMs',
        'firstCooldownMs',
        'cooldownMs',
        'capacityWaitMs',
        'maxCooldownMs',
        'name',
        'whenAllOpen',
      ].map((key) => (value: unknown) => ({ [key]: value })),
      ...Object.keys(balanceFields).map((key) => (value: unknown) => ({ balance: { [key]: value } })),
      ...Object.keys(admissionFields).map((key) => (value: unknown) => ({ admission: { [key]: value } })),
      ...Object.keys(hedgeFields).map((key) => (value: unknown) => ({ hedge: { [key]: value } })),
      (value) => ({ affinity: { maxLoadFactor: value } }),
      (value) => ({ targets: [target({ cost: value })] }),
      (value) => ({ route: { group: [{ route: 'a', weight: value }] } }),
      (value) => ({ route: value }),
      (value) => ({
        targets: [target({ probe: { client: { serverReady: async () => true }, model: value } })],
      }),
    ];
    for (const place of places) {
      for (const value of values) {
        const input = { targets: [target({})], ...place(value) };
        expectAgreement(routerConfigSchema(), acceptRouterOptions, input);
      }
    }
    for (const value of values) {
      const input = { targets: [{ name: 'a', model: chatModel, contextWindow: value }] };
      expectAgreement(chatRouterConfigSchema(), acceptChatRouterOptions, input);
    }
  });

  it('accepts what chatRouterConfigSchema() accepts, resolved to the same value', () => {
    const options = fc.oneof({ weight: 20, arbitrary: strictObject(chatFields, ['targets']) }, junk);
    fc.assert(
      fc.property(options, (input) =>
        expectAgreement(chatRouterConfigSchema(), acceptChatRouterOptions, input),
      ),
      { numRuns: 1000 },
    );
  });

  it('accepts what breakerOptionsSchema() accepts, defaults filled', () => {
    fc.assert(
      fc.property(either(strictObject(breakerFields)), (input) =>
        expectAgreement(breakerOptionsSchema(), acceptBreakerOptions, input),
      ),
      { numRuns: 1000 },
    );
  });

  it('reads a saved breaker state as breakerSnapshotSchema() does', () => {
    const finite = either(fc.double({ noNaN: true, noDefaultInfinity: true }), edges);
    const state = fc.oneof(
      fc.record(
        { kind: fc.constant('closed'), trips: integer(0), closedAt: finite },
        { requiredKeys: ['kind'] },
      ),
      fc.record(
        { kind: fc.constant('open'), trips: integer(1), openedAt: finite, halfOpenAt: finite },
        { requiredKeys: ['kind'] },
      ),
      fc.record(
        { kind: fc.constant('half-open'), trips: integer(1), since: finite },
        { requiredKeys: ['kind'] },
      ),
      junk,
    );
    const snapshot = fc.oneof(
      {
        weight: 10,
        arbitrary: fc.record(
          { version: either(fc.constant(1), fc.constant(2)), state, lastFailureAt: finite },
          { requiredKeys: ['version', 'state'] },
        ),
      },
      fc
        .record({ version: fc.constant(1), state, extra: fc.constant(1) })
        .map((value) => Object.create(value)),
      junk,
    );
    fc.assert(
      fc.property(snapshot, (input) =>
        expectAgreement(breakerSnapshotSchema(), acceptBreakerSnapshot, input),
      ),
      { numRuns: 1000 },
    );
  });

  it('reads rate-limit watch options as their schema does', () => {
    const fields = {
      fetch: either(fc.constant(fetch)),
      minRemainingRequests: integer(0),
      minRemainingTokens: integer(0),
    };
    expect(Object.keys(fields)).toEqual(Object.keys(rateLimitWatchSchema().shape));
    fc.assert(
      fc.property(fc.oneof(strictObject(fields), junk), (input) =>
        expectAgreement(rateLimitWatchSchema(), acceptRateLimitWatchOptions, input),
      ),
      { numRuns: 500 },
    );
  });
});
