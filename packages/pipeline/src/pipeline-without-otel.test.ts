import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../test/support/source-fixture.js';

// As batcher-without-otel.test.ts: a fresh process, so that nothing else loaded or registered
// OpenTelemetry first (decision 0025, third addendum).

describe('createPipeline', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('imports, makes a pipeline and runs it in a fresh process without loading @opentelemetry/api, and uses an SDK registered afterwards', async () => {
    const result = await fixtureResult(new URL('./pipeline-without-otel-fixture.ts', import.meta.url));
    expect(result).toEqual({
      afterImport: false,
      afterConstruct: false,
      afterCall: false,
      afterRegister: true,
      totals: [3, 7],
      // The run's span, a span per step under it, and the Triton RPC under its step.
      spans: [
        { name: 'inference.GRPCInferenceService/ModelInfer', parent: 'pipeline.step echo' },
        { name: 'pipeline lazy', parent: null },
        { name: 'pipeline.step echo', parent: 'pipeline lazy' },
        { name: 'pipeline.step sum', parent: 'pipeline lazy' },
      ],
    });
  });
});
