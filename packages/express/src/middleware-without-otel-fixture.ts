// Child process of middleware-without-otel.test.ts: a fresh process imports the Express integration
// (and Express) from source, serves a route behind infergate() with tracing on (the default) and a
// budget, answers one request, and prints whether @opentelemetry/api was loaded after each step and
// what the handler saw. Then it registers a context manager and a propagator only (no SDK), whose
// context must still reach the handler, and then a tracer and a MeterProvider: the same middleware
// must then open its server span under the caller's `traceparent`, the budget span under it, run
// the handler with the server span active and count the request. The API, imported as ES module or
// required, is loaded from its CommonJS build (its `exports` give Node no ES module), which puts it
// in the require cache.
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { contextOf, infergate } from './index.js';

const requireCache = createRequire(import.meta.url).cache;
const otelLoaded = () =>
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(path));
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

const afterImport = otelLoaded();
// Set once the fixture registers something (which loads the API); the app reads it per request.
let otel: typeof import('@opentelemetry/api') | undefined;
const MARKER = Symbol.for('infergate.test.marker');
const finished: Promise<unknown>[] = [];
let released = 0;
const app = express();
app.use((request, response, next) => {
  finished.push(once(response, 'finish'));
  // Stands in for an application's own middleware that enters a context of its own.
  if (otel === undefined) return next();
  const marked = otel.context.active().setValue(MARKER, request.headers['x-marker']);
  otel.context.with(marked, next);
});
app.post(
  '/v1/thing/:id',
  infergate({
    gateway: {},
    budget: async () => () => {
      released++;
    },
  }),
  (request, response) => {
    const { tenant } = contextOf(request);
    const active = otel?.trace.getActiveSpan()?.spanContext();
    response.json({
      tenant,
      marker: otel?.context.active().getValue(MARKER) ?? null,
      traceId: active?.traceId ?? null,
      spanId: active?.spanId ?? null,
    });
  },
);
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/thing/42`;
const afterConstruct = otelLoaded();

async function send(): Promise<{ requestId: string | null; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'x-tenant-id': 't',
      'x-request-id': 'req-1',
      'x-marker': 'from the caller',
      traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
    },
  });
  const answer = { requestId: response.headers.get('x-request-id'), body: await response.json() };
  await Promise.all(finished);
  return answer;
}

const nothingRegistered = await send();
const afterCall = otelLoaded();

// A context manager and a propagator, no SDK: the application's context reaches the handler.
otel = await import('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const contextOnly = await send();
otel.context.disable();
otel.propagation.disable();

const { installInMemoryTracing } = await import('../../../test/unit/otel.js');
const { installInMemoryMetrics } = await import('../../../test/unit/otel-metrics.js');
const tracing = installInMemoryTracing();
const metrics = installInMemoryMetrics();
const traced = await send();
const spans = tracing.exporter.getFinishedSpans().map((span) => ({
  name: span.name,
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parentSpanId: span.parentSpanContext?.spanId ?? null,
}));
const requests = (await metrics.points('infergate.express.requests')).map((point) => ({
  attributes: point.attributes,
  value: point.value,
}));
server.close();
await metrics.uninstall();
tracing.uninstall();
console.log(
  `RESULT ${JSON.stringify({
    afterImport,
    afterConstruct,
    afterCall,
    nothingRegistered,
    contextOnly,
    traced,
    spans,
    requests,
    released,
  })}`,
);
