import { ErrorCode, InfergateError } from '../errors.js';
import type { ResolvedGrpcTransportOptions } from '../options.js';
import type { H2EngineOptions } from './h2-engine.js';
import type { WritePolicy } from './h2-frame-writer.js';

/** What carries inference: grpc-js, or the lean client on our own HTTP/2 layer (decision 0017). */
export type InferenceEngine = 'grpc-js' | 'http2';

/**
 * The grpc-js channel options the http2 engine honours: its redial backoff and its keepalive. Any
 * other key has no meaning to it, so it is never ignored silently: with `engine` unset, inference
 * then goes over grpc-js; with `engine: 'http2'` the options are refused.
 */
export const H2_CHANNEL_OPTIONS: readonly string[] = [
  'grpc.initial_reconnect_backoff_ms',
  'grpc.max_reconnect_backoff_ms',
  'grpc.keepalive_time_ms',
  'grpc.keepalive_timeout_ms',
  'grpc.keepalive_permit_without_calls',
];

/** The engine when `engine` is not given. */
export const DEFAULT_ENGINE: InferenceEngine = 'http2';

/**
 * The engine `options` ask for: `engine` if given, else the default, which falls back to grpc-js
 * when channelOptions hold a key only grpc-js understands.
 */
export function chooseEngine(options: ResolvedGrpcTransportOptions): InferenceEngine {
  if ((options.engine ?? DEFAULT_ENGINE) === 'grpc-js') return 'grpc-js';
  const foreign = Object.keys(options.channelOptions).filter((key) => !H2_CHANNEL_OPTIONS.includes(key));
  if (foreign.length === 0) return 'http2';
  if (options.engine === 'http2') {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `invalid options: channelOptions ${foreign.map((key) => `'${key}'`).join(', ')} apply to grpc-js only, ` +
        `and engine 'http2' carries inference; leave engine unset (inference then uses grpc-js) or set it to 'grpc-js'`,
    );
  }
  return 'grpc-js';
}

function numberOption(options: ResolvedGrpcTransportOptions, key: string, fallback: number): number {
  const value = options.channelOptions[key];
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `invalid options: channelOptions '${key}' must be a non-negative number, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

/** gRPC's default redial backoff: 1 s, growing to 120 s. */
const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 120_000;

function writePolicyFromEnvironment(): WritePolicy | undefined {
  const value = process.env.INFERGATE_H2_WRITE_POLICY;
  return value === 'now' || value === 'microtask' || value === 'immediate' ? value : undefined;
}

/** The http2 engine's options from the client's (channelOptions it honours win, as for grpc-js). */
export function h2EngineOptions(options: ResolvedGrpcTransportOptions, secure: boolean): H2EngineOptions {
  const { keepalive } = options;
  const initialMs = Math.max(
    1,
    numberOption(options, 'grpc.initial_reconnect_backoff_ms', INITIAL_BACKOFF_MS),
  );
  return {
    secure,
    // Internal and undocumented: the unary benchmark compares write policies with it.
    writePolicy: writePolicyFromEnvironment(),
    tls: options.tls,
    compression: options.compression,
    loadBalancing: options.loadBalancing,
    keepalive: {
      timeMs: Math.max(1, numberOption(options, 'grpc.keepalive_time_ms', keepalive.timeMs)),
      timeoutMs: Math.max(1, numberOption(options, 'grpc.keepalive_timeout_ms', keepalive.timeoutMs)),
      permitWithoutCalls:
        numberOption(options, 'grpc.keepalive_permit_without_calls', keepalive.permitWithoutCalls ? 1 : 0) !==
        0,
    },
    backoff: {
      initialMs,
      maxMs: Math.max(initialMs, numberOption(options, 'grpc.max_reconnect_backoff_ms', MAX_BACKOFF_MS)),
    },
  };
}
