/**
 * What z.record accepts as a record: an object, not an array, whose constructor (if it has one) is
 * Object of some realm (a function whose prototype is a non-array object with an own isPrototypeOf). Client option records (internal/accept-client-options.ts) and call headers
 * (header-values.ts) take the same shapes.
 */
export function isPlainObject(value: unknown): value is Record<PropertyKey, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const maker: unknown = (value as { constructor?: unknown }).constructor;
  if (maker === undefined || typeof maker !== 'function') return true;
  // zod asks its isObject of the prototype too: an array is none, even one given an isPrototypeOf.
  const prototype: unknown = maker.prototype;
  return (
    typeof prototype === 'object' &&
    prototype !== null &&
    !Array.isArray(prototype) &&
    Object.hasOwn(prototype, 'isPrototypeOf')
  );
}
