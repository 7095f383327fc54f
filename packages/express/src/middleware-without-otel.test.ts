import { describe, expect, it } from 'vitest';
import {
  FIXTURE_EXIT_BOUND_MS as EXIT_BOUND_MS,
  fixtureResult,
} from '../../../test/support/source-fixture.js';

// As batcher-without-otel.test.ts: a fresh process, so that nothing else loaded or registered
// OpenTelemetry first (decision 0025, third addendum).

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

describe('infergate() middleware', { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it('imports, serves and answers a request in a fresh process without loading @opentelemetry/api, keeps a context manager registered later, and uses an SDK registered afterwards', async () => {
    const result = await fixtureResult(new URL('./middleware-without-otel-fixture.ts', import.meta.url));
    expect(result).toMatchObject({ afterImport: false, afterConstruct: false, afterCall: false });
    // Nothing registered: the request is served as ever (tenant, request id, budget), with no context.
    expect(result.nothingRegistered).toEqual({
      requestId: 'req-1',
      body: { tenant: 't', marker: null, traceId: null, spanId: null },
    });
    // A context manager and a propagator only: the application's context reaches the handler.
    expect(result.contextOnly).toEqual({
      requestId: 'req-1',
      body: { tenant: 't', marker: 'from the caller', traceId: null, spanId: null },
    });
    // An SDK: a server span under the caller's traceparent, active in the handler (with the
    // application's context kept), and the budget span under it.
    const server = result.spans.find((span: { name: string }) => span.name === 'POST /v1/thing/:id');
    expect(server).toEqual({
      name: 'POST /v1/thing/:id',
      traceId: CALLER_TRACE,
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
      parentSpanId: CALLER_SPAN,
    });
    expect(result.traced).toEqual({
      requestId: 'req-1',
      body: { tenant: 't', marker: 'from the caller', traceId: CALLER_TRACE, spanId: server.spanId },
    });
    expect(result.spans).toEqual([
      {
        name: 'infergate.budget',
        traceId: CALLER_TRACE,
        spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
        parentSpanId: server.spanId,
      },
      server,
    ]);
    expect(result.requests).toEqual([
      {
        attributes: {
          'http.request.method': 'POST',
          'http.response.status_code': 200,
          'http.route': '/v1/thing/:id',
        },
        value: 1,
      },
    ]);
    expect(result.released).toBe(3);
  });
});
