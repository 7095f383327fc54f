import { type Fields, isObject } from '@infergate/core/internal/option-checks';
import type { BreakerSnapshot } from '../breaker-state.js';

// Reads a saved breaker state as breakerSnapshotSchema() does (plain z.object: unknown keys are
// dropped, not refused), answering "valid, resolved to this" or undefined (then the schema decides
// and words the error). Held to the schema by accept-breaker-snapshot.property.test.ts. Decision 0025.

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isInteger(value: unknown, min: 0 | 1): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

function state(value: unknown): Fields | undefined {
  if (!isObject(value)) return undefined;
  const { kind, trips } = value;
  if (kind === 'closed') {
    if (!isInteger(trips, 0)) return undefined;
    const resolved: Fields = { kind, trips };
    if ('closedAt' in value) {
      if (value.closedAt !== undefined && !isFiniteNumber(value.closedAt)) return undefined;
      resolved.closedAt = value.closedAt;
    }
    return resolved;
  }
  if (kind === 'open') {
    const { openedAt, halfOpenAt } = value;
    return isInteger(trips, 1) && isFiniteNumber(openedAt) && isFiniteNumber(halfOpenAt)
      ? { kind, trips, openedAt, halfOpenAt }
      : undefined;
  }
  if (kind === 'half-open') {
    const { since } = value;
    return isInteger(trips, 1) && isFiniteNumber(since) ? { kind, trips, since } : undefined;
  }
  return undefined;
}

export function acceptBreakerSnapshot(input: unknown): BreakerSnapshot | undefined {
  if (!isObject(input) || input.version !== 1) return undefined;
  const resolved = state(input.state);
  if (resolved === undefined) return undefined;
  const snapshot: Fields = { version: 1, state: resolved };
  if ('lastFailureAt' in input) {
    if (input.lastFailureAt !== undefined && !isFiniteNumber(input.lastFailureAt)) return undefined;
    snapshot.lastFailureAt = input.lastFailureAt;
  }
  return snapshot as unknown as BreakerSnapshot;
}
