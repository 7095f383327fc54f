import { InfergateError, lazyInstruments, sdkTracer } from '@infergate/core';
import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import type { HttpRequest, HttpResponse } from './http-types.js';
import { VERSION } from './version.js';

const SCOPE = '@infergate/express';

const instruments = lazyInstruments(SCOPE, VERSION, (meter) => ({
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
  /** The context the rest of the request runs in (the server span active). */
  readonly context: Context;
  /** Runs the budget check under an `infergate.budget` span. */
  budget<R>(tenant: string, run: () => Promise<R>): Promise<R>;
}

const OFF: RequestTelemetry = {
  context: context.active(),
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
  if (!enabled) return { ...OFF, context: context.active() };
  const tracer = sdkTracer(SCOPE, VERSION);
  const started = performance.now();
  const method = request.method ?? 'GET';
  let active = context.active();
  let own: Span | undefined;
  if (tracer !== undefined && trace.getSpan(active)?.isRecording() !== true) {
    active = propagation.extract(active, request, headerGetter);
    own = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': method, 'url.path': (request.url ?? '/').split('?')[0] ?? '/' },
      },
      active,
    );
    active = trace.setSpan(active, own);
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
      if (status >= 500) own.setStatus({ code: SpanStatusCode.ERROR });
      own.end();
    }
    const recording = instruments();
    recording?.requests.add(1, attributes);
    recording?.duration.record((performance.now() - started) / 1000, attributes);
  };
  response.once('finish', end);
  response.once('close', end);
  return {
    context: active,
    async budget(tenant, run) {
      if (tracer === undefined) return run();
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
