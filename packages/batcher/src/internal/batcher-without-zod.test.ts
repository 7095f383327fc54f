import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../../test/support/source-fixture.js';

// As core's client-without-zod.test.ts: a fresh process, so that nothing else loaded zod first.

describe('createMicroBatcher', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('imports and validates valid options in a fresh process without loading zod', async () => {
    const result = await fixtureResult(new URL('./batcher-without-zod-fixture.ts', import.meta.url));
    expect(result).toEqual({ afterImport: false, afterBatcher: false, afterSchema: true });
  });
});
