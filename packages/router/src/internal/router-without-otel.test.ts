import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../../test/support/source-fixture.js';

// As router-without-zod.test.ts: a fresh process, so that nothing else loaded or registered
// OpenTelemetry first (decision 0025, second addendum).

describe('createInferRouter', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('imports, makes a router and sends a call in a fresh process without loading @opentelemetry/api, and uses an SDK registered afterwards', async () => {
    const result = await fixtureResult(new URL('./router-without-otel-fixture.ts', import.meta.url));
    expect(result).toEqual({
      afterImport: false,
      afterConstruct: false,
      afterCall: false,
      afterRegister: true,
      spans: expect.arrayContaining([
        'infergate.router.attempt',
        'inference.GRPCInferenceService/ModelInfer',
      ]),
      attempts: [{ target: 'a', outcome: 'success', value: 1 }],
    });
  });
});
