// ModelInfer on the http2 engine, without the protobuf runtime: the request comes written by
// infer-request-writer.ts and the answer is read by infer-response-reader.ts, so a process that
// only infers on this engine never loads @bufbuild/protobuf nor builds src/gen's descriptors
// (decision 0024). Only an answer that reader leaves to the runtime (parameters, typed contents)
// loads grpc-wire.ts, within what is left of the call's deadline.
import { abortError, ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';
import type { ModelInferResponse } from '../gen/grpc_service_pb.js';
import { fromGrpcStatus } from '../grpc-status.js';
import { explainFailedConnect } from '../internal/http1-probe.js';
import { readModelInferResponse } from '../internal/infer-response-reader.js';
import { loadedGrpcWire } from '../internal/lazy-modules.js';
import { headersSetter, RPC_SERVICE, startRpcSpan } from '../internal/tracing.js';
import { waitForGrpcWire } from '../internal/wait-for-grpc-wire.js';
import type { Endpoint } from '../options.js';
import type { H2Engine, H2StatusError } from './h2-engine.js';
import type { MessagePool } from './message-pool.js';

/** A request ready for the http2 engine: framed chunks, metadata and deadline. */
export interface H2Request {
  chunks: readonly Uint8Array[];
  headers: Record<string, string>;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
  /**
   * Receive the answer into this pool's memory, and give it back once `read` returned (or threw):
   * only for a call whose `read` keeps no view of the message (every output copied into the
   * caller's memory, decision 0026).
   */
  pool?: MessagePool | undefined;
}

/** What the calls need to know of the transport that makes them. */
export interface H2Site {
  endpoint: Endpoint;
  endpoints: readonly Endpoint[];
  tracing: boolean;
  maxMessageBytes: number;
}

// The method's name written out: its descriptor is in grpc-wire.ts, which this path does not load.
const INFER_METHOD = 'ModelInfer';
const INFER_PATH = `/${RPC_SERVICE}/${INFER_METHOD}`;

/**
 * ModelInfer on the http2 engine, with the grpc-js path's span and error mapping; `read` turns the
 * parsed answer into what the call returns, while the message's memory is still the call's.
 */
export function inferOverH2<T>(
  engine: H2Engine,
  site: H2Site,
  request: H2Request,
  model: string,
  context: InfergateErrorOptions,
  read: (message: ModelInferResponse) => T,
): Promise<T> {
  if (request.signal?.aborted) throw abortError(request.signal, context);
  const span = startRpcSpan(site.tracing, INFER_METHOD, site.endpoint, request.headers, headersSetter, model);
  const { signal, timeoutMs } = request;
  const startedAt = timeoutMs === undefined ? 0 : performance.now();
  return engine
    .unary(request.chunks, {
      path: INFER_PATH,
      headers: request.headers,
      timeoutMs,
      signal,
      maxMessageBytes: site.maxMessageBytes,
      allocate: request.pool?.allocate,
    })
    .then(
      (bytes) => {
        span.end(undefined, 0);
        const { pool } = request;
        const message = readOrUndefined(bytes);
        if (message !== undefined)
          return pool === undefined ? read(message) : readThenRelease(read, message, bytes, pool);
        const left = timeoutMs === undefined ? undefined : timeoutMs - (performance.now() - startedAt);
        return parseWithRuntime(bytes, signal, left, context).then((parsed) =>
          pool === undefined ? read(parsed) : readThenRelease(read, parsed, bytes, pool),
        );
      },
      async (error: H2StatusError) => {
        const mapped = signal?.aborted ? abortError(signal, context) : fromGrpcStatus(error, context);
        span.end(mapped, error.code);
        throw await explainFailedConnect(mapped, site.endpoints, signal);
      },
    );
}

/** `read`, then the message's memory back to the pool: whatever `read` returned holds copies only. */
function readThenRelease<T>(
  read: (message: ModelInferResponse) => T,
  message: ModelInferResponse,
  bytes: Buffer,
  pool: MessagePool,
): T {
  try {
    return read(message);
  } finally {
    pool.release(bytes);
  }
}

function notAModelInferResponse(error: unknown): InfergateError {
  return new InfergateError(
    ErrorCode.DataLoss,
    `the server's answer is not a ModelInferResponse: ${(error as Error).message}`,
    { cause: error },
  );
}

function readOrUndefined(bytes: Uint8Array): ModelInferResponse | undefined {
  try {
    return readModelInferResponse(bytes);
  } catch (error) {
    throw notAModelInferResponse(error);
  }
}

/** An answer the hand-written reader leaves to the protobuf runtime (grpc-wire.ts, loaded now if need be). */
async function parseWithRuntime(
  bytes: Uint8Array,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
  context: InfergateErrorOptions,
): Promise<ModelInferResponse> {
  let wire = loadedGrpcWire();
  if (wire === undefined) {
    const options = signal === undefined ? {} : { signal };
    // What is left of the deadline, at least a millisecond: the answer is in, only the code is not.
    ({ wire } = await waitForGrpcWire(
      timeoutMs === undefined ? options : { ...options, timeoutMs: Math.max(1, timeoutMs) },
      undefined,
      context,
    ));
  }
  return wire.parseModelInferResponse(bytes);
}
