import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../../test/support/source-fixture.js';

// As batcher-without-otel.test.ts: a fresh process, so that nothing else loaded or registered
// OpenTelemetry first (decision 0025, third addendum).

describe('chat models', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('import, make a model and send a call and a stream in a fresh process without loading @opentelemetry/api, and use an SDK registered afterwards', async () => {
    const result = await fixtureResult(new URL('./chat-without-otel-fixture.ts', import.meta.url));
    expect(result).toEqual({
      afterImport: false,
      afterConstruct: false,
      afterCall: false,
      afterRegister: true,
      traceparentBefore: [null, null],
      spans: ['chat gpt-4o-mini'],
      propagated: true,
      tokens: [
        { type: 'input', sum: 1 },
        { type: 'output', sum: 2 },
      ],
    });
  });
});
