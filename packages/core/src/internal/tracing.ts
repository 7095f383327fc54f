import type { Attributes, Span, TextMapSetter } from '@opentelemetry/api';
import type { InfergateError } from '../errors.js';
import { VERSION } from '../version.js';
import { loadOtel } from './lazy-modules.js';

/** Where a span's propagated fields go: grpc-js Metadata, or the http2 engine's header record. */
export interface HeaderCarrier {
  set(key: string, value: string): void;
}

const metadataSetter: TextMapSetter<HeaderCarrier> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

/** A plain header record as a span carrier. */
export function headerCarrier(headers: Record<string, string>): HeaderCarrier {
  return {
    set(key, value) {
      headers[key] = value;
    },
  };
}

export const RPC_SERVICE = 'inference.GRPCInferenceService';

export interface RpcSpan {
  end(error?: InfergateError, grpcStatus?: number): void;
}

const noopSpan: RpcSpan = { end() {} };

/**
 * Starts a client span for one RPC and writes `traceparent` (and any other propagated fields)
 * into the call's metadata. With no OpenTelemetry SDK registered this is the API's no-op.
 */
export function startRpcSpan(
  enabled: boolean,
  method: string,
  server: { host: string; port: number },
  metadata: HeaderCarrier,
  extra: Attributes = {},
): RpcSpan {
  if (!enabled) return noopSpan;
  const { context, propagation, SpanKind, SpanStatusCode, trace } = loadOtel();
  const tracer = trace.getTracer('@infergate/core', VERSION);
  const parent = context.active();
  const span: Span = tracer.startSpan(
    `${RPC_SERVICE}/${method}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'rpc.system': 'grpc',
        'rpc.service': RPC_SERVICE,
        'rpc.method': method,
        'server.address': server.host,
        'server.port': server.port,
        ...extra,
      },
    },
    parent,
  );
  propagation.inject(trace.setSpan(parent, span), metadata, metadataSetter);
  return {
    end(error, grpcStatus) {
      span.setAttribute('rpc.grpc.status_code', grpcStatus ?? (error ? 2 : 0));
      if (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.rawMessage });
        span.setAttribute('error.type', error.code);
      }
      span.end();
    },
  };
}
