import type * as Zod from 'zod';
import { loadZod } from './internal/load-zod.js';

/**
 * A breaker's state. `trips` counts consecutive trips: it grows each time a half-open probe fails
 * (or the breaker trips again soon after closing) and sets how long the next open period lasts.
 */
export type BreakerState =
  | { readonly kind: 'closed'; readonly trips: number; readonly closedAt: number | undefined }
  | { readonly kind: 'open'; readonly trips: number; readonly openedAt: number; readonly halfOpenAt: number }
  | { readonly kind: 'half-open'; readonly trips: number; readonly since: number };

export type BreakerStateKind = BreakerState['kind'];

/** What `Breaker.toJSON()` writes and `initialState` takes back (e.g. across serverless cold starts). */
export interface BreakerSnapshot {
  readonly version: 1;
  readonly state: BreakerState;
  readonly lastFailureAt: number | undefined;
}

function buildBreakerSnapshotSchema(z: typeof Zod.z) {
  const finite = z.number().finite();
  const stateSchema = z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('closed'),
      trips: z.number().int().nonnegative(),
      closedAt: finite.optional(),
    }),
    z.object({
      kind: z.literal('open'),
      trips: z.number().int().positive(),
      openedAt: finite,
      halfOpenAt: finite,
    }),
    z.object({ kind: z.literal('half-open'), trips: z.number().int().positive(), since: finite }),
  ]);
  return z.object({
    version: z.literal(1),
    state: stateSchema,
    lastFailureAt: finite.optional(),
  });
}

let snapshotSchema: ReturnType<typeof buildBreakerSnapshotSchema> | undefined;

/**
 * The schema of a saved breaker state; zod loads on first use. A valid snapshot is read without it
 * (internal/accept-breaker-snapshot.ts), so a serverless cold start that restores its breakers does
 * not load zod either (decision 0025).
 */
export function breakerSnapshotSchema(): ReturnType<typeof buildBreakerSnapshotSchema> {
  snapshotSchema ??= buildBreakerSnapshotSchema(loadZod());
  return snapshotSchema;
}

export const CLOSED: BreakerState = { kind: 'closed', trips: 0, closedAt: undefined };

/** Gauge value of a state: 0 closed, 1 half-open, 2 open. */
export function stateLevel(kind: BreakerStateKind): number {
  return kind === 'closed' ? 0 : kind === 'half-open' ? 1 : 2;
}

export interface OpenTimeOptions {
  /** Open time after the first trip, in ms. */
  openMs: number;
  /** Longest open time, in ms. */
  maxOpenMs: number;
  /** Growth factor per consecutive trip. */
  openMultiplier: number;
  /** Fraction of the open time taken off at random, so breakers of many processes do not probe in step. */
  openJitter: number;
}

/** min(maxOpenMs, openMs · multiplier^(trips−1)), less up to `openJitter` of it at random. */
export function openTimeMs(trips: number, options: OpenTimeOptions, random: () => number): number {
  const grown = Math.min(
    options.maxOpenMs,
    options.openMs * options.openMultiplier ** Math.max(0, trips - 1),
  );
  return grown * (1 - options.openJitter * random());
}
