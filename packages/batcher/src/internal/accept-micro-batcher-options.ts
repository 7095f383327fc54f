import {
  allValid,
  type Checked,
  type Fields,
  hasOnlyKeys,
  INVALID,
  isObject,
  recordOf,
} from '@infergate/core/internal/option-checks';
import type { ResolvedMicroBatcherOptions } from '../options.js';

// Reads the batcher's options as microBatcherOptionsSchema() does, answering only "valid, resolved
// to this" or "not sure" (then the schema decides and words the error), so that a batcher made with
// valid options does not load zod. Same rules as core's accept-client-options.ts; held to the schema
// by accept-micro-batcher-options.property.test.ts. Decision 0025.

const OPTION_KEYS = new Set([
  'maxBatchSize',
  'maxQueueDelayMs',
  'flush',
  'serverBatching',
  'statsIntervalMs',
  'getModelStatistics',
  'maxInFlightBatches',
  'maxQueueSize',
  'maxQueueWaitMs',
  'maxQueueBytes',
  'tenants',
  'priorityLevels',
  'models',
  'getModelConfig',
  'client',
  'maxBisectRpcs',
  'tracing',
]);
const TENANT_KEYS = new Set(['weight']);
const MODEL_KEYS = new Set(['maxBatchSize']);

/** z.number().int() (safe integers) at or above `min`: 0 for nonnegative(), 1 for positive(). */
function integerFrom(min: 0 | 1, value: unknown, fallback?: number): Checked<number | undefined> {
  if (value === undefined) return fallback;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min ? value : INVALID;
}

/** z.number().finite() and nonnegative() (min 0, −0 included) or positive() (above 0). */
function finiteFrom(positive: boolean, value: unknown, fallback?: number): Checked<number | undefined> {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) return INVALID;
  return (positive ? value > 0 : value >= 0) ? value : INVALID;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): Checked<T> {
  if (value === undefined) return fallback;
  return allowed.includes(value as T) ? (value as T) : INVALID;
}

function isFunction(value: unknown): boolean {
  return typeof value === 'function';
}

/** A strict object with one required field, resolved by `check`. */
function strictOne(
  value: unknown,
  keys: ReadonlySet<string>,
  key: string,
  check: (field: unknown) => Checked<unknown>,
) {
  if (!isObject(value) || !hasOnlyKeys(value, keys)) return INVALID;
  const field = value[key];
  const resolved = field === undefined ? INVALID : check(field);
  return resolved === INVALID ? INVALID : { [key]: resolved };
}

/** The options resolved as the schema resolves them, when they are valid; undefined when they may not be. */
export function acceptMicroBatcherOptions(input: unknown): ResolvedMicroBatcherOptions | undefined {
  if (!isObject(input) || !hasOnlyKeys(input, OPTION_KEYS)) return undefined;
  // Keys in the schema's order; optional ones when the input has them (also as `undefined`).
  const resolved: Fields = {};
  const optional = (key: string, check: (value: unknown) => unknown) => {
    if (key in input) resolved[key] = check(input[key]);
  };
  const optionalFunction = (key: string) =>
    optional(key, (value) => (value === undefined || isFunction(value) ? value : INVALID));
  resolved.maxBatchSize = integerFrom(1, input.maxBatchSize, 64);
  resolved.maxQueueDelayMs = finiteFrom(false, input.maxQueueDelayMs, 10);
  resolved.flush = oneOf(input.flush, ['adaptive', 'fixed'], 'adaptive');
  resolved.serverBatching = oneOf(input.serverBatching, ['measure', 'defer', 'ignore'], 'measure');
  resolved.statsIntervalMs = finiteFrom(true, input.statsIntervalMs, 1000);
  optionalFunction('getModelStatistics');
  resolved.maxInFlightBatches = integerFrom(1, input.maxInFlightBatches, 2);
  resolved.maxQueueSize = integerFrom(1, input.maxQueueSize, 1024);
  optional('maxQueueWaitMs', (value) => finiteFrom(true, value));
  resolved.maxQueueBytes = integerFrom(1, input.maxQueueBytes, 256 * 1024 * 1024);
  resolved.tenants =
    input.tenants === undefined
      ? {}
      : recordOf(input.tenants, (tenant) =>
          strictOne(tenant, TENANT_KEYS, 'weight', (weight) => finiteFrom(true, weight)),
        );
  optional('priorityLevels', (value) => integerFrom(0, value));
  resolved.models =
    input.models === undefined
      ? {}
      : recordOf(input.models, (model) =>
          strictOne(model, MODEL_KEYS, 'maxBatchSize', (size) => integerFrom(0, size)),
        );
  optionalFunction('getModelConfig');
  // As the schema's check: any object (an array too) with a modelConfig method.
  optional('client', (value) =>
    value === undefined ||
    (typeof value === 'object' && value !== null && isFunction((value as Fields).modelConfig))
      ? value
      : INVALID,
  );
  resolved.maxBisectRpcs = integerFrom(0, input.maxBisectRpcs, 32);
  resolved.tracing =
    input.tracing === undefined ? true : typeof input.tracing === 'boolean' ? input.tracing : INVALID;
  return allValid(resolved) ? (resolved as ResolvedMicroBatcherOptions) : undefined;
}
