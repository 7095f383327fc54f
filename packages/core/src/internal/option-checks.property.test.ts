import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadZod } from './lazy-modules.js';
import { hasOnlyKeys, INVALID, isObject, recordOf } from './option-checks.js';

// The shared rules that core, the batcher and the router read options with (decision 0025) held
// to zod itself: recordOf to z.record(z.string(), …), isObject and hasOnlyKeys to a strict
// z.object, over objects of every odd make: null prototypes, class instances, inherited and
// hidden keys, symbol keys, an own `__proto__`, and constructors of every kind (an own
// `constructor` field, a prototype that is an array, a function without a prototype).

class Settings {
  a = 1;
}

/** A function used as a constructor whose prototype is `prototype` (its `constructor` pointing back). */
function madeBy(prototype: object | null, extra: object = {}): object {
  function Maker(this: Record<string, unknown>) {
    Object.assign(this, extra);
  }
  if (prototype !== null)
    Object.defineProperty(prototype, 'constructor', { value: Maker, writable: true, configurable: true });
  Maker.prototype = prototype;
  return new (Maker as unknown as new () => object)();
}

const arrayWithIsPrototypeOf = () =>
  Object.assign([] as unknown[], { isPrototypeOf: Object.prototype.isPrototypeOf });

/** Values an own `constructor` field may hold. */
const constructorField = fc.constantFrom<unknown>(
  undefined,
  null,
  1,
  'x',
  {},
  [],
  () => undefined,
  function plain() {},
  Object.assign(function noPrototype() {}, { prototype: null }),
  Object.assign(function arrayPrototype() {}, { prototype: arrayWithIsPrototypeOf() }),
  Object.assign(function bareArrayPrototype() {}, { prototype: [] }),
  Object.assign(function ownIsPrototypeOf() {}, { prototype: { isPrototypeOf: () => true } }),
  Object.assign(function nullObjectPrototype() {}, { prototype: Object.create(null) }),
  Object,
  Array,
  Map,
);

const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'constructor', '0', '') },
  fc.constantFrom('__proto__', 'toString', 'isPrototypeOf'),
);
const entries = fc.dictionary(key, fc.oneof(fc.integer(), fc.constant(undefined)), { maxKeys: 3 });

/** An object of some make, with `fields` as its own enumerable keys where it can hold them. */
const oddObject = entries.chain((fields) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant({ ...fields }) },
    fc.constant(Object.assign(Object.create(null), fields)),
    fc.constant(Object.assign(new Settings(), fields)),
    fc.constant(Object.assign(Object.create({ inherited: 1 }), fields)),
    fc.constant(Object.create(fields)),
    fc.constant(Object.assign(Object.create([]), fields)),
    fc.constant(Object.assign([], fields)),
    fc.constant(Object.assign(() => undefined, fields)),
    fc.constant(Object.assign(new Date(0), fields)),
    fc.constant(Object.assign(new Map(), fields)),
    fc.constant(Object.assign(new Number(1), fields)),
    fc.constant(madeBy(arrayWithIsPrototypeOf(), fields)),
    fc.constant(madeBy([], fields)),
    fc.constant(madeBy({ isPrototypeOf: () => true }, fields)),
    fc.constant(madeBy(Object.create(null), fields)),
    constructorField.map((maker) => ({ ...fields, constructor: maker })),
    constructorField.map((maker) => Object.assign(Object.create({ constructor: maker }), fields)),
    fc.constant(Object.assign({ ...fields }, { [Symbol('s')]: 1 })),
    fc.constant(Object.defineProperty({ ...fields }, 'hidden', { value: 1, enumerable: false })),
    fc.constant(
      Object.defineProperty({ ...fields }, '__proto__', {
        value: 1,
        enumerable: true,
        writable: true,
        configurable: true,
      }),
    ),
  ),
);
const value = fc.oneof(
  { weight: 10, arbitrary: oddObject },
  fc.constantFrom<unknown>(undefined, null, 0, '', 'x', true, Symbol('s'), 10n),
);

/** The make of a value, for a failure's message. */
function describeMake(input: unknown): string {
  if (typeof input !== 'object' || input === null) return String(input);
  const maker = (input as { constructor?: unknown }).constructor;
  const prototype = typeof maker === 'function' ? (maker as { prototype?: unknown }).prototype : undefined;
  return `keys ${Reflect.ownKeys(input).map(String).join(',')}; constructor ${typeof maker} ${
    typeof maker === 'function' ? maker.name : typeof maker
  }; its prototype ${Array.isArray(prototype) ? 'an array' : typeof prototype}`;
}

/** Same prototype, own keys and leaves. */
function expectSame(actual: unknown, expected: unknown): void {
  expect(Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected));
  expect(Reflect.ownKeys(actual as object)).toEqual(Reflect.ownKeys(expected as object));
  for (const key of Reflect.ownKeys(expected as object))
    expect(
      Object.is(
        (actual as Record<PropertyKey, unknown>)[key],
        (expected as Record<PropertyKey, unknown>)[key],
      ),
    ).toBe(true);
}

describe('option-checks against zod', () => {
  const z = loadZod();

  it('recordOf accepts what z.record(z.string(), …) accepts, resolved to the same value', () => {
    const record = z.record(z.string(), z.unknown());
    fc.assert(
      fc.property(value, (input) => {
        const oracle = record.safeParse(input);
        const resolved = recordOf(input, (element) => element);
        if ((resolved !== INVALID) !== oracle.success)
          expect.fail(`zod ${oracle.success ? 'accepts' : 'refuses'} a record of ${describeMake(input)}`);
        if (oracle.success) expectSame(resolved, oracle.data);
      }),
      { numRuns: 2000 },
    );
  });

  it('isObject and hasOnlyKeys accept what a strict z.object accepts', () => {
    const strict = z.object({ a: z.unknown().optional(), b: z.unknown().optional() }).strict();
    const keys = new Set(['a', 'b']);
    fc.assert(
      fc.property(value, (input) => {
        const accepted = isObject(input) && hasOnlyKeys(input, keys);
        expect(accepted).toBe(strict.safeParse(input).success);
      }),
      { numRuns: 2000 },
    );
  });

  it('a record made by a constructor whose prototype is an array is no record, as for zod', () => {
    const input = madeBy(arrayWithIsPrototypeOf(), { a: 1 });
    expect(z.record(z.string(), z.unknown()).safeParse(input).success).toBe(false);
    expect(recordOf(input, (element) => element)).toBe(INVALID);
  });
});
