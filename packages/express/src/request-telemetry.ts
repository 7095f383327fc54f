import { InfergateError, lazyInstruments, sdkTracer } from '@infergate/core';
import { loadOtel, otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Attributes, Context, Span, TextMapGetter } from '@opentelemetry/api';
import type { HttpRequest, HttpResponse } from './http-types.js';
import { VERSION } from './version.js';

const SCOPE = '@infergate/express';

// Rebuilt when the application registers (or replaces) its MeterProvider, even after the middleware was made.
const registeredInstruments = lazyInstruments(SCOPE, VERSION, (meter) => ({
  requests: meter.createCounter('infergate.express.requests', {
    description: 'HTTP requests the infergate middleware saw, by route and status',
    unit: '{request}',
  }),
  duration: meter.createHistogram('infergate.express.request.duration', {
    description: 'Time from the middleware seeing a request to its response ending',
    unit: 's',
    advice: {
      explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    },
  }),
}));

/**
 * The middleware's instruments, or `undefined` while no MeterProvider is registered. While nothing
 * at all is registered with the OpenTelemetry API this answers without loading it.
 */
function instruments() {
  return otelRegistered() ? registeredInstruments() : undefined;
}

const headerGetter: TextMapGetter<HttpRequest> = {
  keys: (carrier) => Object.keys(carrier.headers),
  get: (carrier, key) => carrier.headers[key.toLowerCase()],
};

/** Express's matched route (`/v1/chat`, `/models/:name`), never the raw path (unbounded cardinality). */
function routeOf(request: HttpRequest): string | undefined {
  const matched = (request as { route?: { path?: unknown }; baseUrl?: unknown }).route?.path;
  if (typeof matched !== 'string') return undefined;
  const base = (request as { baseUrl?: unknown }).baseUrl;
  return `${typeof base === 'string' ? base : ''}${matched}`;
}

export interface RequestTelemetry {
  /** Runs the rest of the request in its context (the server span active). */
  inRequest<R>(run: () => R): R;
  /** Runs the budget check under an `infergate.budget` span. */
  budget<R>(tenant: string, run: () => Promise<R>): Promise<R>;
}

/**
 * With `tracing: false`, or while nothing is registered with the OpenTelemetry API: the request
 * runs in the context it came in with (entering the active context again would change nothing, and
 * with nothing registered there is no context manager, hence no context to enter).
 */
const OFF: RequestTelemetry = {
  inRequest: (run) => run(),
  budget: (_tenant, run) => run(),
};

/**
 * The middleware's span and metrics for one request. When an HTTP instrumentation already made a
 * server span (it is active), requests run under that one; otherwise the middleware opens a
 * SERVER span `{method} {route}` continuing the caller's `traceparent`. When the response ends:
 * `http.route`, `http.response.status_code`, and the `infergate.express.*` metrics.
 */
export function startRequestTelemetry(
  enabled: boolean,
  request: HttpRequest,
  response: HttpResponse,
): RequestTelemetry {
  if (!enabled) return OFF;
  const started = performance.now();
  const method = request.method ?? 'GET';
  // Nothing registered with the API (decision 0025, third addendum): no tracer, no propagator, no
  // context manager, so no span and no context; a MeterProvider registered before the response
  // ends still counts the request, as before.
  const registered = otelRegistered();
  const tracer = registered ? sdkTracer(SCOPE, VERSION) : undefined;
  let active: Context | undefined;
  let own: Span | undefined;
  if (registered) {
    const { context, propagation, SpanKind, trace } = loadOtel();
    active = context.active();
    if (tracer !== undefined && trace.getSpan(active)?.isRecording() !== true) {
      active = propagation.extract(active, request, headerGetter);
      own = tracer.startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': method,
            'url.path': (request.url ?? '/').split('?')[0] ?? '/',
          },
        },
        active,
      );
      active = trace.setSpan(active, own);
    }
  }
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    const route = routeOf(request);
    const status = response.statusCode;
    const attributes: Attributes = { 'http.request.method': method, 'http.response.status_code': status };
    if (route !== undefined) attributes['http.route'] = route;
    if (own !== undefined) {
      own.setAttributes(attributes);
      if (route !== undefined) own.updateName(`${method} ${route}`);
      if (status >= 500) own.setStatus({ code: loadOtel().SpanStatusCode.ERROR });
      own.end();
    }
    const recording = instruments();
    recording?.requests.add(1, attributes);
    recording?.duration.record((performance.now() - started) / 1000, attributes);
  };
  response.once('finish', end);
  response.once('close', end);
  return {
    inRequest(run) {
      if (active === undefined) return run();
      return loadOtel().context.with(active, run);
    },
    async budget(tenant, run) {
      if (tracer === undefined) return run();
      const { context, SpanKind, SpanStatusCode, trace } = loadOtel();
      const span = tracer.startSpan(
        'infergate.budget',
        { kind: SpanKind.INTERNAL, attributes: { 'infergate.tenant': tenant } },
        context.active(),
      );
      try {
        return await context.with(trace.setSpan(context.active(), span), run);
      } catch (error) {
        const code = InfergateError.from(error).code;
        span.setAttribute('error.type', code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: code });
        throw error;
      } finally {
        span.end();
      }
    },
  };
}
