import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../../test/support/source-fixture.js';

describe('createTritonClient', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('validates valid options in a fresh process without loading zod', async () => {
    const result = await fixtureResult(new URL('./client-without-zod-fixture.ts', import.meta.url), {
      sourceCondition: false,
    });
    expect(result).toEqual({ afterClient: false, engine: 'http2', afterSchema: true });
  });
});
