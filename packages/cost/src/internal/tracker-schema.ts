import { z } from 'zod';
import type { CostTracker } from '../cost-tracker.js';

/**
 * A CostTracker, recognised by shape rather than `instanceof`, so a tracker from the ESM copy of
 * this package is accepted by the CJS copy and the other way round.
 */
export function isCostTracker(value: unknown): value is CostTracker {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.reserve === 'function' &&
    typeof candidate.settle === 'function' &&
    typeof candidate.release === 'function' &&
    typeof candidate.gpuCost === 'function' &&
    typeof candidate.emit === 'function'
  );
}

export const trackerSchema = z.custom<CostTracker>(isCostTracker, 'tracker must be a CostTracker');

/** A function-valued option. */
export const functionSchema = (what: string) =>
  z.custom<(...args: never[]) => unknown>(
    (value) => typeof value === 'function',
    `${what} must be a function`,
  );
