import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../../test/support/source-fixture.js';

// As core's client-without-zod.test.ts: a fresh process, so that nothing else loaded zod first.

describe('createInferRouter and createChatRouter', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('import and validate valid options (saved breaker states too) in a fresh process without loading zod', async () => {
    const result = await fixtureResult(new URL('./router-without-zod-fixture.ts', import.meta.url));
    expect(result).toEqual({ afterImport: false, afterRouters: false, afterSchema: true });
  });
});
