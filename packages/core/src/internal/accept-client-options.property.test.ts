import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectSameValue } from '../../../../test/support/expect-same-value.js';
import { InfergateError } from '../errors.js';
import { clientOptionsSchema, parseClientOptions, parseOptions } from '../options.js';
import { acceptClientOptions } from './accept-client-options.js';

// The zod schema is the oracle: acceptClientOptions must accept exactly what it accepts, resolved
// to the same value (prototypes, keys in the same order, `undefined` where zod keeps a key), and
// parseClientOptions must end exactly as parseOptions with the schema does, error included.

class Settings {
  url = 'h:1';
}

/** Values of every kind, and the edges of each: what a wrong option may hold. */
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
  2 ** 31 - 1,
  2 ** 31,
  2 ** 53 - 1,
  2 ** 53,
  1e308,
  -(2 ** 60),
  '',
  'x',
  ' ',
  '\n',
  'é',
  true,
  false,
  [],
  [''],
  ['a'],
  {},
  { a: 1 },
  Object.create(null),
  new Date(0),
  new Map(),
  new Uint8Array(1),
  Buffer.from('pem'),
  () => undefined,
  Symbol('s'),
  10n,
  new Settings(),
);

/** A field's value: mostly a valid one, sometimes absent-as-undefined, sometimes wrong. */
const either = <T>(valid: fc.Arbitrary<T>, wrong: fc.Arbitrary<unknown> = junk) =>
  fc.oneof(
    { weight: 40, arbitrary: valid },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.oneof(wrong, junk) },
  );

const positiveInteger = (max = 2 ** 53 - 1) =>
  either(
    fc.oneof(fc.integer({ min: 1, max: Math.min(max, 2 ** 31 - 1) }), fc.constantFrom(1, max)),
    fc.oneof(fc.constantFrom(max + 1, 2 ** 53, 0, -0, -1, 1.5, Number.MAX_VALUE, -(2 ** 60)), fc.double()),
  );
const nonEmpty = fc.string({ minLength: 1, maxLength: 12 });
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.constantFrom('', '\t', 'a\r\nb', '\u0000', '\u{1F600}', '\uD800'),
);
const urlText = fc.oneof(fc.constantFrom('127.0.0.1:8001', 'grpcs://triton:443', 'h'), nonEmpty);
const headerName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('authorization', 'x-tenant', 'X_Y', '1', 'constructor') },
  fc.constantFrom('bad name', '', 'é', '__proto__'),
  fc.string({ maxLength: 6 }),
);
const safeValue = fc.stringMatching(/^[\t\x20-\x7e]{0,8}$/);

function withSymbolKey(value: object): object {
  return Object.assign({ ...value }, { [Symbol('key')]: 'v' });
}
/** An own `__proto__` key, as JSON.parse makes it, first. */
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
  return Object.defineProperty({ ...value }, key, { value: 'v', enumerable: false });
}

/** A record (headers, channelOptions) in the odd shapes z.record meets: see recordOf. */
function recordLike(values: fc.Arbitrary<unknown>) {
  const entries = fc.dictionary(headerName, values, { maxKeys: 4 });
  return fc.oneof(
    { weight: 30, arbitrary: entries },
    entries.map((record) => Object.assign(Object.create(null), record)),
    entries.map((record) => withOwnProto(record, 'v')),
    entries.map(withSymbolKey),
    entries.map((record) => withHiddenKey(record, 'hidden')),
    entries.map((record) => Object.assign(new Settings(), record)),
  );
}

/** A strict object of optional `fields`, sometimes with a key it does not know, own or inherited. */
function strictObject(fields: Record<string, fc.Arbitrary<unknown>>) {
  const object = fc.record(fields, { requiredKeys: [] });
  return fc.oneof(
    { weight: 40, arbitrary: object },
    object.map((value) => ({ ...value, colour: 'red' })),
    object.map((value) => Object.assign(Object.create({ inherited: 1 }), value)),
    object.map((value) => Object.assign(Object.create(null), value)),
    object.map((value) => withOwnProto(value, 1)),
    object.map(withSymbolKey),
    object.map((value) => withHiddenKey(value, 'hidden')),
  );
}

const pem = either(
  fc.oneof(nonEmpty, fc.constant(new Uint8Array([1])), fc.constant(Buffer.from('pem'))),
  fc.constantFrom('', new ArrayBuffer(1), new Float32Array(1), new DataView(new ArrayBuffer(1)), [1]),
);
const interceptor = fc.constant(() => undefined);

const sharedMemoryFields = {
  thresholdBytes: positiveInteger(),
  maxRegions: positiveInteger(),
  maxRegionBytes: positiveInteger(),
};
const tlsFields = { ca: pem, cert: pem, key: pem, serverName: either(nonEmpty, text) };
const keepaliveFields = {
  timeMs: positiveInteger(),
  timeoutMs: positiveInteger(),
  permitWithoutCalls: either(fc.boolean()),
};

const fields = {
  url: either(
    fc.oneof(urlText, fc.array(urlText, { minLength: 1, maxLength: 3 })),
    fc.oneof(fc.constantFrom('', [], ['']), fc.array(fc.oneof(urlText, junk), { maxLength: 3 })),
  ),
  loadBalancing: either(
    fc.constantFrom('round_robin', 'pick_first'),
    fc.constantFrom('random', 'ROUND_ROBIN'),
  ),
  engine: either(fc.constantFrom('grpc-js', 'http2'), fc.constant('http1')),
  compression: either(fc.constantFrom('none', 'deflate', 'gzip'), fc.constant('br')),
  enableGpuIpc: either(fc.boolean()),
  sharedMemory: either(strictObject(sharedMemoryFields)),
  timeoutMs: positiveInteger(),
  headers: either(recordLike(either(safeValue, text)), recordLike(text)),
  accessToken: either(
    safeValue.filter((token) => token.length > 0),
    text,
  ),
  accessHeader: either(nonEmpty, text),
  tls: either(fc.oneof(fc.boolean(), strictObject(tlsFields))),
  keepalive: either(strictObject(keepaliveFields)),
  maxMessageBytes: positiveInteger(2 ** 31 - 1),
  tracing: either(fc.boolean()),
  interceptors: either(
    fc.array(interceptor, { maxLength: 3 }),
    fc.array(fc.oneof(interceptor, junk), { minLength: 1, maxLength: 3 }),
  ),
  channelOptions: either(
    recordLike(
      fc.oneof(
        fc.string({ maxLength: 4 }),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      ),
    ),
    recordLike(fc.oneof(fc.double(), junk)),
  ),
};

const options = fc.oneof(
  { weight: 40, arbitrary: strictObject(fields) },
  // Inherited options are read (z.object reads keys with `in`), and so are class instances.
  strictObject(fields).map((value) => Object.create(value)),
  strictObject(fields).map((value) => Object.assign(new Settings(), value)),
  junk,
);

const isBytes = (value: object) => value instanceof Uint8Array;

function outcome(parse: () => unknown) {
  try {
    return { value: parse() };
  } catch (error) {
    return { error };
  }
}

function expectAgreement(input: unknown): void {
  const oracle = clientOptionsSchema().safeParse(input);
  const accepted = acceptClientOptions(input);
  expect(accepted !== undefined, 'accepted exactly what the schema accepts').toBe(oracle.success);
  if (oracle.success) expectSameValue(accepted, oracle.data, isBytes);

  const ours = outcome(() => parseClientOptions(input, 'client options'));
  const theirs = outcome(() => parseOptions(clientOptionsSchema(), input, 'client options'));
  if ('error' in theirs) {
    expect('error' in ours).toBe(true);
    // Every refusal, whatever the input's shape (symbol keys included), is the typed error.
    expect(theirs.error).toBeInstanceOf(InfergateError);
    expect(ours.error).toBeInstanceOf(InfergateError);
    const [error, expected] = [ours.error as InfergateError, theirs.error as InfergateError];
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.code).toBe(expected.code);
    expect(String(error)).toBe(String(expected));
  } else {
    expectSameValue(ours.value, theirs.value, isBytes);
  }
}

describe('client options without zod', () => {
  it('generates every field of the schema, so that a new one is held to it too', () => {
    const shape = clientOptionsSchema().shape;
    expect(Object.keys(fields)).toEqual(Object.keys(shape));
    expect(Object.keys(sharedMemoryFields)).toEqual(Object.keys(shape.sharedMemory.unwrap().shape));
    expect(Object.keys(keepaliveFields)).toEqual(Object.keys(shape.keepalive.unwrap().shape));
    const tlsObject = shape.tls.unwrap().options[1];
    expect(Object.keys(tlsFields)).toEqual(Object.keys(tlsObject.shape));
  });

  it('accepts what the zod schema accepts, resolved to the same value, and fails as it does', () => {
    fc.assert(fc.property(options, expectAgreement), { numRuns: 3000 });
  });

  it('agrees on valid options with each field at its edges', () => {
    const valid = fc.record(
      {
        url: fc.oneof(
          urlText.filter((url) => url.length > 0),
          fc.array(fc.constant('h:1'), { minLength: 1 }),
        ),
        timeoutMs: fc.constantFrom(1, 2 ** 53 - 1),
        maxMessageBytes: fc.constantFrom(1, 2 ** 31 - 1),
        sharedMemory: fc.constantFrom({}, { maxRegions: 1 }, { thresholdBytes: 2 ** 53 - 1 }),
        keepalive: fc.constantFrom({}, { permitWithoutCalls: true }, { timeMs: undefined }),
        tls: fc.constantFrom(true, false, {}, { ca: Buffer.from('x'), serverName: 's' }, { key: undefined }),
        headers: fc.constantFrom({}, { authorization: 'Bearer t' }, { 'x-a': '\t ~' }),
        channelOptions: fc.constantFrom({}, { 'grpc.max_reconnect_backoff_ms': 1000, 'grpc.x': 's' }),
        accessToken: fc.constantFrom('t', '\t~ '),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(valid, (input) => {
        expect(acceptClientOptions(input)).toBeDefined();
        expectAgreement(input);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees on the inputs where zod has a rule of its own', () => {
    const cases: unknown[] = [
      undefined,
      null,
      {},
      { url: '' },
      { url: [] },
      { url: [''] },
      { url: ['h:1', 5] },
      { url: 'h:1', accessHeader: [] },
      { timeoutMs: 2 ** 60 },
      { maxMessageBytes: 2 ** 60 },
      { maxMessageBytes: -(2 ** 60) },
      { timeoutMs: Number.NaN },
      { timeoutMs: Number.POSITIVE_INFINITY },
      { timeoutMs: -0 },
      { timeoutMs: undefined, url: undefined, tls: undefined },
      { tls: { ca: '' } },
      { tls: { ca: 5 } },
      { tls: { colour: 'red' } },
      { headers: JSON.parse('{"__proto__":"v","a":"b"}') },
      { headers: { 'bad name': 'v' } },
      { headers: { a: 'line\nbreak' } },
      { headers: new Map() },
      { channelOptions: { a: Number.NaN } },
      { headers: { [Symbol('key')]: 'v' } },
      { channelOptions: { a: 1, [Symbol('key')]: 2 } },
      { url: 'h:1', [Symbol('key')]: 'v', tls: { [Symbol('key')]: 1 } },
      { interceptors: [() => undefined, 'not a function'] },
      JSON.parse('{"__proto__":{"url":"h:1"}}'),
      Object.create({ url: 'h:1' }),
      Object.create({ colour: 'red' }),
    ];
    for (const input of cases) expectAgreement(input);
  });
});
