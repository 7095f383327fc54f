// The property tests' check that a hand-written option reader gave the same value as its schema.
import { expect } from 'vitest';

/**
 * Same prototype, same own keys in the same order, the same leaves (Object.is); an object for which
 * `isLeaf` is true (a client, a function holder, bytes) is a leaf too: passed through, the same object.
 */
export function expectSameValue(
  actual: unknown,
  expected: unknown,
  isLeaf: (value: object) => boolean = () => false,
  path = 'options',
): void {
  if (Object.is(actual, expected)) return;
  if (typeof expected !== 'object' || expected === null || isLeaf(expected)) {
    expect(Object.is(actual, expected), `${path}: ${String(actual)} vs ${String(expected)}`).toBe(true);
    return;
  }
  expect(typeof actual, path).toBe('object');
  const object = actual as Record<PropertyKey, unknown>;
  expect(Object.getPrototypeOf(object), path).toBe(Object.getPrototypeOf(expected));
  expect(Reflect.ownKeys(object), path).toEqual(Reflect.ownKeys(expected));
  for (const key of Reflect.ownKeys(expected)) {
    const next = (expected as Record<PropertyKey, unknown>)[key];
    expectSameValue(object[key], next, isLeaf, `${path}.${String(key)}`);
  }
}
