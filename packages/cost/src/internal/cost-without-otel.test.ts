import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../../test/support/source-fixture.js';

// A fresh process, so that nothing else loaded or registered OpenTelemetry first (decision 0025,
// fourth addendum).
describe('createCostTracker', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('imports, makes a tracker, reserves and settles, and charges a Triton call in a fresh process without loading @opentelemetry/api, and uses an SDK registered afterwards', async () => {
    const result = await fixtureResult(new URL('./cost-without-otel-fixture.ts', import.meta.url));
    expect(result).toEqual({
      afterImport: false,
      afterConstruct: false,
      afterCall: false,
      chargedBefore: true,
      afterRegister: true,
      // Each settle put its cost and tenant on the span active where it ran.
      costAttributes: {
        'reserve and settle': { usd: 'number', tenant: 'acme' },
        'triton call': { usd: 'number', tenant: 'globex' },
      },
      rpcSpan: true,
      spent: [
        { model: 'm', positive: true },
        { model: 'identity', provider: 'triton', positive: true },
      ],
      // Only the reservation made after the registration counted up (the one held from before is
      // not counted down on this provider either: it reads 0, not −1, once both are finished).
      reservationsHeld: 1,
      reservationsAfter: [0],
      remaining: [{ 'infergate.budget': 'hourly' }],
    });
  });
});
