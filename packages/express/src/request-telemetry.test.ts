import type { AddressInfo } from 'node:net';
import { context, SpanKind, trace } from '@opentelemetry/api';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { type InMemoryMetrics, installInMemoryMetrics } from '../../../test/unit/otel-metrics.js';
import { infergate } from './middleware.js';

let tracing: ReturnType<typeof installInMemoryTracing>;
let meters: InMemoryMetrics;

beforeAll(() => {
  tracing = installInMemoryTracing();
  meters = installInMemoryMetrics();
});
afterAll(async () => {
  await meters.uninstall();
  tracing.uninstall();
});

/** An app on 127.0.0.1 whose route reports the active span's id; stopped by the caller. */
async function serve(configure: (app: express.Express) => void) {
  const app = express();
  configure(app);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** The body a route answers: the span active in the handler. */
function activeSpanBody() {
  return { active: trace.getActiveSpan()?.spanContext().spanId ?? null };
}

describe('express request telemetry', () => {
  it('uses the server span an HTTP instrumentation already opened instead of opening a second one', async () => {
    let outer: string | undefined;
    const app = await serve((app) => {
      // Stands in for @opentelemetry/instrumentation-http: a SERVER span active around the request.
      app.use((_request, response, next) => {
        const span = trace.getTracer('http-instrumentation').startSpan('POST', { kind: SpanKind.SERVER });
        outer = span.spanContext().spanId;
        response.once('finish', () => span.end());
        context.with(trace.setSpan(context.active(), span), next);
      });
      app.post('/v1/thing/:id', infergate({ gateway: {} }), (_request, response) => {
        response.json(activeSpanBody());
      });
    });
    try {
      const response = await fetch(`${app.url}/v1/thing/42`, {
        method: 'POST',
        headers: { 'x-tenant-id': 't' },
      });
      expect(await response.json()).toEqual({ active: outer });
      await expect
        .poll(async () =>
          (await meters.points('infergate.express.requests')).map((point) => [point.attributes, point.value]),
        )
        .toEqual([
          [
            {
              'http.request.method': 'POST',
              'http.route': '/v1/thing/:id',
              'http.response.status_code': 200,
            },
            1,
          ],
        ]);
      expect(
        tracing.exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER),
      ).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('opens no span and records no metric with tracing: false', async () => {
    tracing.exporter.reset();
    const before = (await meters.points('infergate.express.requests')).length;
    const app = await serve((app) =>
      app.post('/quiet', infergate({ gateway: {}, tracing: false }), (_request, response) => {
        response.json(activeSpanBody());
      }),
    );
    try {
      const response = await fetch(`${app.url}/quiet`, { method: 'POST', headers: { 'x-tenant-id': 't' } });
      expect(await response.json()).toEqual({ active: null });
      expect(tracing.exporter.getFinishedSpans()).toEqual([]);
      expect(await meters.points('infergate.express.requests')).toHaveLength(before);
    } finally {
      await app.close();
    }
  });
});
