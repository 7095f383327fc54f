import { isPlainObject } from './plain-object.js';

// The rules of zod 4 that a hand-written acceptance of options has to mirror, shared by the packages
// that read valid options without loading zod (decision 0025: core's client options here, the
// batcher's and the router's through `@infergate/core/internal/option-checks`, which makes no API
// promise). Each check answers "valid, resolved to this" or INVALID ("not sure"): on INVALID the
// caller asks its zod schema, which decides and words the error.

export { isPlainObject };

/** "Not sure": the zod schema decides. */
export const INVALID: unique symbol = Symbol('invalid');
export type Checked<T> = T | typeof INVALID;
export type Fields = Record<PropertyKey, unknown>;

/** What z.object accepts: any object but null and arrays. */
export function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A strict object: no key (own or inherited, enumerable) outside the schema's, as zod lists them with for...in. */
export function hasOnlyKeys(value: Fields, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

/**
 * z.record(z.string(), value): own enumerable string keys of a plain object, in their order, each
 * value resolved by `resolve`; `__proto__` dropped, a symbol key refused.
 */
export function recordOf<T>(
  value: unknown,
  resolve: (element: unknown) => Checked<T>,
): Checked<Record<string, T>> {
  if (!isPlainObject(value)) return INVALID;
  const copy: Record<string, T> = {};
  for (const key of Reflect.ownKeys(value)) {
    if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(value, key)) continue;
    if (typeof key !== 'string') return INVALID;
    const element = resolve(value[key]);
    if (element === INVALID) return INVALID;
    copy[key] = element;
  }
  return copy;
}

/** True when no value of `resolved` (own, enumerable) is INVALID. */
export function allValid(resolved: Fields): boolean {
  for (const key in resolved) if (resolved[key] === INVALID) return false;
  return true;
}
