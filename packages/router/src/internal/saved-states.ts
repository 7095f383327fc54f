import { isPlainObject } from '@infergate/core/internal/option-checks';
import type { BreakerSnapshot } from '../breaker-state.js';

/**
 * `initialState` as both routers read it, with zod (config.ts) or without (accept-router-options.ts):
 * a record as z.record takes one (a plain object; its own enumerable string keys, in their order; a
 * symbol key refused), each value an object (the breaker checks a target's saved state when it
 * starts). Unlike z.record it keeps an own `__proto__` entry: a target may be named `__proto__`,
 * `toJSON()` writes its entry, and JSON.parse reads it back as an own key. The copy is built with
 * Object.fromEntries, so that entry stays an own one. `undefined`: not such a record.
 */
export function savedStatesOf(value: unknown): Record<string, BreakerSnapshot> | undefined {
  if (!isPlainObject(value)) return undefined;
  const entries: [string, BreakerSnapshot][] = [];
  for (const key of Reflect.ownKeys(value)) {
    if (!Object.prototype.propertyIsEnumerable.call(value, key)) continue;
    if (typeof key !== 'string') return undefined;
    const state: unknown = value[key];
    if (typeof state !== 'object') return undefined;
    entries.push([key, state as BreakerSnapshot]);
  }
  return Object.fromEntries(entries);
}
