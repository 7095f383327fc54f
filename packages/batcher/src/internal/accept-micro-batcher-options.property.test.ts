import { InfergateError, parseOptions } from '@infergate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectSameValue } from '../../../../test/support/expect-same-value.js';
import { microBatcherOptionsSchema, resolveMicroBatcherOptions } from '../options.js';
import { acceptMicroBatcherOptions } from './accept-micro-batcher-options.js';

// The zod schema is the oracle, as for core's client options (accept-client-options.property.test.ts):
// acceptMicroBatcherOptions must accept exactly what the schema accepts, resolved to the same value,
// and resolveMicroBatcherOptions must end exactly as parseOptions with the schema does.

class Settings {
  maxBatchSize = 8;
}

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
  2 ** 53 - 1,
  2 ** 53,
  1e308,
  '',
  'x',
  true,
  false,
  [],
  ['a'],
  {},
  { a: 1 },
  Object.create(null),
  new Date(0),
  new Map(),
  () => undefined,
  Symbol('s'),
  10n,
  new Settings(),
);

const either = <T>(valid: fc.Arbitrary<T>, wrong: fc.Arbitrary<unknown> = junk) =>
  fc.oneof(
    { weight: 40, arbitrary: valid },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.oneof(wrong, junk) },
  );
const edges = fc.constantFrom(0, -0, -1, 0.5, 1.5, 2 ** 53, -(2 ** 60), Number.MAX_VALUE, Number.MIN_VALUE);
const integer = (min: 0 | 1) =>
  either(
    fc.oneof(fc.integer({ min, max: 2 ** 31 }), fc.constantFrom(min, 2 ** 53 - 1)),
    fc.oneof(edges, fc.double()),
  );
const finite = (positive: boolean) =>
  either(
    fc.oneof(
      fc.double({ min: positive ? Number.MIN_VALUE : 0, max: 1e6, noNaN: true }),
      fc.constantFrom(positive ? 1 : 0, Number.MAX_VALUE),
    ),
    fc.oneof(edges, fc.double()),
  );
const aFunction = fc.constant(() => undefined);
const recordKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'tenant-1', 'resnet50', 'constructor', '') },
  fc.constantFrom('__proto__', 'toString'),
  fc.string({ maxLength: 6 }),
);

function withSymbolKey(value: object): object {
  return Object.assign({ ...value }, { [Symbol('key')]: 1 });
}
function withOwnProto(value: object, proto: unknown): object {
  const object = Object.defineProperty({}, '__proto__', {
    value: proto,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return Object.assign(object, value);
}
function withHiddenKey(value: object, key: string): object {
  return Object.defineProperty({ ...value }, key, { value: 1, enumerable: false });
}

/** A strict object of optional `fields`, sometimes with a key it does not know, own or inherited. */
function strictObject(fields: Record<string, fc.Arbitrary<unknown>>, requiredKeys: string[] = []) {
  const object = fc.record(fields, { requiredKeys });
  return fc.oneof(
    { weight: 40, arbitrary: object },
    object.map((value) => ({ ...value, colour: 'red' })),
    object.map((value) => Object.assign(Object.create({ inherited: 1 }), value)),
    object.map((value) => Object.assign(Object.create(null), value)),
    object.map((value) => Object.create(value)),
    object.map((value) => withOwnProto(value, 1)),
    object.map(withSymbolKey),
    object.map((value) => withHiddenKey(value, 'hidden')),
  );
}

/** A record (tenants, models) in the odd shapes z.record meets. */
function recordLike(values: fc.Arbitrary<unknown>) {
  const entries = fc.dictionary(recordKey, values, { maxKeys: 3 });
  return fc.oneof(
    { weight: 30, arbitrary: entries },
    entries.map((record) => Object.assign(Object.create(null), record)),
    entries.map((record) => withOwnProto(record, { weight: 1 })),
    entries.map(withSymbolKey),
    entries.map((record) => withHiddenKey(record, 'hidden')),
    entries.map((record) => Object.assign(new Settings(), record)),
  );
}

const tenantFields = { weight: finite(true) };
const modelFields = { maxBatchSize: integer(0) };

const fields = {
  maxBatchSize: integer(1),
  maxQueueDelayMs: finite(false),
  flush: either(fc.constantFrom('adaptive', 'fixed'), fc.constantFrom('eager', 'FIXED')),
  serverBatching: either(fc.constantFrom('measure', 'defer', 'ignore'), fc.constant('always')),
  statsIntervalMs: finite(true),
  getModelStatistics: either(aFunction),
  maxInFlightBatches: integer(1),
  maxQueueSize: integer(1),
  maxQueueWaitMs: finite(true),
  maxQueueBytes: integer(1),
  tenants: either(recordLike(either(strictObject(tenantFields, ['weight']), strictObject(tenantFields)))),
  priorityLevels: integer(0),
  models: either(recordLike(either(strictObject(modelFields, ['maxBatchSize']), strictObject(modelFields)))),
  getModelConfig: either(aFunction),
  client: either(
    fc.constantFrom({ modelConfig: () => undefined }, Object.assign([], { modelConfig: () => undefined })),
    fc.constantFrom({ modelConfig: 1 }, { modelStatistics: () => undefined }),
  ),
  maxBisectRpcs: integer(0),
  tracing: either(fc.boolean()),
};

const options = fc.oneof(
  { weight: 40, arbitrary: strictObject(fields) },
  strictObject(fields).map((value) => Object.assign(new Settings(), value)),
  junk,
);

/** A function holder or the client: passed through as given. */
const isPassedThrough = (value: object) =>
  typeof (value as Settings).maxBatchSize === 'function' || Object.hasOwn(value, 'modelConfig');

function outcome(parse: () => unknown) {
  try {
    return { value: parse() };
  } catch (error) {
    return { error };
  }
}

function expectAgreement(input: unknown): void {
  const oracle = microBatcherOptionsSchema().safeParse(input);
  const accepted = acceptMicroBatcherOptions(input);
  expect(accepted !== undefined, 'accepted exactly what the schema accepts').toBe(oracle.success);
  if (oracle.success) expectSameValue(accepted, oracle.data, isPassedThrough);

  const ours = outcome(() => resolveMicroBatcherOptions(input as never));
  // resolveMicroBatcherOptions() takes no options as {}.
  const given = input === undefined ? {} : input;
  const theirs = outcome(() => parseOptions(microBatcherOptionsSchema(), given, 'micro-batcher options'));
  if ('error' in theirs) {
    expect(ours.error).toBeInstanceOf(InfergateError);
    expect(String(ours.error)).toBe(String(theirs.error));
  } else {
    expectSameValue(ours.value, theirs.value, isPassedThrough);
  }
}

describe('micro-batcher options without zod', () => {
  it('generates every field of the schema, so that a new one is held to it too', () => {
    const shape = microBatcherOptionsSchema().shape;
    expect(Object.keys(fields)).toEqual(Object.keys(shape));
    const tenant = shape.tenants.unwrap().valueType;
    const model = shape.models.unwrap().valueType;
    expect(Object.keys(tenantFields)).toEqual(Object.keys(tenant.shape));
    expect(Object.keys(modelFields)).toEqual(Object.keys(model.shape));
  });

  it('accepts what the zod schema accepts, resolved to the same value, and fails as it does', () => {
    fc.assert(fc.property(options, expectAgreement), { numRuns: 3000 });
  });

  it('accepts valid options with each field at its edges', () => {
    const valid = fc.record(
      {
        maxBatchSize: fc.constantFrom(1, 2 ** 53 - 1),
        maxQueueDelayMs: fc.constantFrom(0, -0, 0.5, Number.MAX_VALUE),
        statsIntervalMs: fc.constantFrom(Number.MIN_VALUE, 1),
        maxQueueWaitMs: fc.constantFrom(undefined, 1e-3),
        tenants: fc.constantFrom({}, { a: { weight: 0.5 } }, JSON.parse('{"__proto__":{"weight":1}}')),
        priorityLevels: fc.constantFrom(0, -0, 3),
        models: fc.constantFrom({}, { m: { maxBatchSize: 0 } }),
        client: fc.constant({ modelConfig: async () => ({ maxBatchSize: 4 }) }),
        tracing: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(valid, (input) => {
        expect(acceptMicroBatcherOptions(input)).toBeDefined();
        expectAgreement(input);
      }),
      { numRuns: 300 },
    );
  });

  it('agrees on the inputs where zod has a rule of its own', () => {
    const cases: unknown[] = [
      undefined,
      null,
      {},
      { maxQueueDelayMs: -0 },
      { maxBatchSize: 2 ** 53 },
      { maxQueueWaitMs: Number.POSITIVE_INFINITY },
      { tenants: { a: {} } },
      { tenants: { a: { weight: 1, colour: 'red' } } },
      { tenants: { a: Object.create({ weight: 1 }) } },
      { tenants: { [Symbol('tenant')]: { weight: 1 } } },
      { models: new Map() },
      { models: { m: { maxBatchSize: -1 } } },
      { client: [] },
      Object.create({ maxBatchSize: 4 }),
      Object.create({ colour: 'red' }),
    ];
    for (const input of cases) expectAgreement(input);
  });
});
