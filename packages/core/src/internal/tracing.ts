import type { Attributes, Span, TextMapSetter } from '@opentelemetry/api';
import type { InfergateError } from '../errors.js';
import { sdkTracer } from '../sdk-tracer.js';
import { VERSION } from '../version.js';
import { loadOtel, otelRegistered } from './lazy-modules.js';
import { GRPC_STATUS_NAMES, recordRpcDuration, rpcInstruments } from './rpc-metrics.js';
import { rpcSemconv } from './semconv-stability.js';

/** Where a span's propagated fields go on grpc-js: its Metadata. */
export interface HeaderCarrier {
  set(key: string, value: string): void;
}

export const metadataSetter: TextMapSetter<HeaderCarrier> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

/**
 * The http2 engine's header record as a span carrier: the record itself with this shared setter,
 * where a carrier object with a closure per call was garbage on every call, traced or not.
 */
export const headersSetter: TextMapSetter<Record<string, string>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

export const RPC_SERVICE = 'inference.GRPCInferenceService';

export interface RpcSpan {
  end(error?: InfergateError, grpcStatus?: number): void;
}

const noopSpan: RpcSpan = { end() {} };

// The streaming RPC's duration is the life of the stream, which the RPC duration metric is not
// meant to describe; its span still records it.
const STREAMING_METHOD = 'ModelStreamInfer';

/**
 * Starts a client span for one RPC, writes `traceparent` (and any other propagated fields) into
 * the call's metadata, and on `end` records the RPC duration metric. Attribute names follow
 * `OTEL_SEMCONV_STABILITY_OPT_IN` (see semconv-stability.ts). With no OpenTelemetry SDK registered
 * the span and the histogram are the API's no-ops; with `enabled` false nothing is done at all.
 */
export function startRpcSpan<Carrier>(
  enabled: boolean,
  method: string,
  server: { host: string; port: number },
  metadata: Carrier,
  setter: TextMapSetter<Carrier>,
  model?: string,
): RpcSpan {
  // Nothing registered with the API: it would only hand out no-ops (and cost its load on a first call).
  if (!enabled || !otelRegistered()) return noopSpan;
  const { context, propagation, SpanKind, SpanStatusCode, trace } = loadOtel();
  const tracer = sdkTracer('@infergate/core', VERSION);
  const measured = method !== STREAMING_METHOD && rpcInstruments() !== undefined;
  if (tracer === undefined) {
    // No SDK: no span to record. A propagator registered on its own still carries the caller's context.
    propagation.inject(context.active(), metadata, setter);
    if (!measured) return noopSpan;
  }
  const semconv = rpcSemconv();
  const fullMethod = `${RPC_SERVICE}/${method}`;
  let span: Span | undefined;
  if (tracer !== undefined) {
    const parent = context.active();
    const attributes: Attributes = { 'server.address': server.host, 'server.port': server.port };
    // The model's attribute is built here, with the span: not as an argument on every call.
    if (model !== undefined) attributes['infergate.model'] = model;
    if (semconv.old) {
      attributes['rpc.system'] = 'grpc';
      attributes['rpc.service'] = RPC_SERVICE;
      attributes['rpc.method'] = method;
    }
    if (semconv.stable) {
      attributes['rpc.system.name'] = 'grpc';
      // The one key both sets share: the current, fully qualified form wins under `rpc/dup`.
      attributes['rpc.method'] = fullMethod;
    }
    span = tracer.startSpan(fullMethod, { kind: SpanKind.CLIENT, attributes }, parent);
    propagation.inject(trace.setSpan(parent, span), metadata, setter);
  }
  const started = measured ? performance.now() : 0;
  return {
    end(error, grpcStatus) {
      const status = grpcStatus ?? (error ? 2 : 0);
      if (span !== undefined) {
        if (span.isRecording()) {
          if (semconv.old) span.setAttribute('rpc.grpc.status_code', status);
          if (semconv.stable)
            span.setAttribute('rpc.status_code', GRPC_STATUS_NAMES[status] ?? String(status));
          if (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error.rawMessage });
            span.setAttribute('error.type', error.code);
          }
        }
        span.end();
      }
      if (measured) {
        recordRpcDuration(
          semconv,
          { method, fullMethod, host: server.host, port: server.port, status, errorType: error?.code },
          performance.now() - started,
        );
      }
    },
  };
}
