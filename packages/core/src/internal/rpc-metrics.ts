import type { Attributes } from '@opentelemetry/api';
import { lazyInstruments } from '../lazy-instruments.js';
import { VERSION } from '../version.js';
import type { RpcSemconv } from './semconv-stability.js';

/** The gRPC status names by number, for `rpc.status_code` and `error.type`. */
export const GRPC_STATUS_NAMES: readonly string[] = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

// Bucket advice from the RPC conventions (seconds); the old millisecond metric gets the same edges ×1000.
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The RPC duration histograms, or undefined while no MeterProvider is registered. */
export const rpcInstruments = lazyInstruments('@infergate/core', VERSION, (meter) => ({
  /** The conventions up to v1.37: milliseconds. */
  old: meter.createHistogram('rpc.client.duration', {
    description: 'Duration of outbound RPCs',
    unit: 'ms',
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS.map((edge) => edge * 1000) },
  }),
  stable: meter.createHistogram('rpc.client.call.duration', {
    description: 'Duration of outbound RPCs',
    unit: 's',
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  }),
}));

export interface RpcOutcome {
  method: string;
  fullMethod: string;
  host: string;
  port: number;
  status: number;
  errorType: string | undefined;
}

// Attribute sets reused per endpoint, method and outcome: building them per call showed in the
// no-SDK overhead figure.
const attributeCache = new Map<string, Attributes>();

function attributesOf(outcome: RpcOutcome, set: 'old' | 'stable'): Attributes {
  const key = `${set}\u0001${outcome.host}\u0001${outcome.port}\u0001${outcome.method}\u0001${outcome.status}\u0001${outcome.errorType ?? ''}`;
  let attributes = attributeCache.get(key);
  if (attributes !== undefined) return attributes;
  attributes =
    set === 'old'
      ? {
          'rpc.system': 'grpc',
          'rpc.service': outcome.fullMethod.slice(0, outcome.fullMethod.lastIndexOf('/')),
          'rpc.method': outcome.method,
          'rpc.grpc.status_code': outcome.status,
          'server.address': outcome.host,
          'server.port': outcome.port,
        }
      : {
          'rpc.system.name': 'grpc',
          'rpc.method': outcome.fullMethod,
          'rpc.status_code': GRPC_STATUS_NAMES[outcome.status] ?? String(outcome.status),
          'server.address': outcome.host,
          'server.port': outcome.port,
        };
  if (outcome.errorType !== undefined) attributes['error.type'] = outcome.errorType;
  if (attributeCache.size >= 1000) attributeCache.clear();
  attributeCache.set(key, attributes);
  return attributes;
}

/** Records one finished unary RPC's duration in the metric(s) the semantic-convention setting asks for. */
export function recordRpcDuration(semconv: RpcSemconv, outcome: RpcOutcome, durationMs: number): void {
  const recording = rpcInstruments();
  if (recording === undefined) return;
  const { old, stable } = recording;
  if (semconv.old) old.record(durationMs, attributesOf(outcome, 'old'));
  if (semconv.stable) stable.record(durationMs / 1000, attributesOf(outcome, 'stable'));
}
