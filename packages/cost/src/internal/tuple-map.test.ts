import { describe, expect, it } from 'vitest';
import { TupleMap } from './tuple-map.js';

describe('TupleMap', () => {
  it('tells an absent part from an empty string and from the same parts in another order', () => {
    const map = new TupleMap<number>(10);
    map.set('acme', undefined, 'gpt-4o', undefined, 1);
    map.set('acme', '', 'gpt-4o', undefined, 2);
    map.set(undefined, 'acme', 'gpt-4o', undefined, 3);
    expect(map.get('acme', undefined, 'gpt-4o', undefined)).toBe(1);
    expect(map.get('acme', '', 'gpt-4o', undefined)).toBe(2);
    expect(map.get(undefined, 'acme', 'gpt-4o', undefined)).toBe(3);
    expect(map.get('acme', undefined, 'gpt-4o', '')).toBeUndefined();
  });

  it('starts empty again once it would pass its limit', () => {
    const map = new TupleMap<number>(2);
    map.set('a', undefined, undefined, undefined, 1);
    map.set('a', undefined, undefined, undefined, 10);
    map.set('b', undefined, undefined, undefined, 2);
    expect(map.get('a', undefined, undefined, undefined)).toBe(10);
    map.set('c', undefined, undefined, undefined, 3);
    expect(map.get('a', undefined, undefined, undefined)).toBeUndefined();
    expect(map.get('c', undefined, undefined, undefined)).toBe(3);
  });
});
