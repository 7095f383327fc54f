import { fromBinary } from '@bufbuild/protobuf';
import { abortError, type InfergateError, type InfergateErrorOptions } from '../errors.js';
import {
  GRPCInferenceService,
  type ModelInferResponse,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from '../gen/grpc_service_pb.js';
import { fromGrpcStatus } from '../grpc-status.js';
import { explainFailedConnect } from '../internal/http1-probe.js';
import { parseModelInferResponse } from '../internal/infer-wire.js';
import { headersSetter, RPC_SERVICE, startRpcSpan } from '../internal/tracing.js';
import type { Endpoint } from '../options.js';
import { type H2Engine, H2StatusError } from './h2-engine.js';

/** One request on ModelStreamInfer, whichever engine carries it. */
export interface OneRequestStream {
  messages: AsyncIterable<ModelStreamInferResponse>;
  cancel(): void;
  end(failure?: InfergateError): void;
}

/** A request ready for the http2 engine: framed chunks, metadata and deadline. */
export interface H2Request {
  chunks: readonly Uint8Array[];
  headers: Record<string, string>;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
}

/** What the calls need to know of the transport that makes them. */
export interface H2Site {
  endpoint: Endpoint;
  endpoints: readonly Endpoint[];
  tracing: boolean;
  maxMessageBytes: number;
}

const methodPath = (name: string) => `/${RPC_SERVICE}/${name}`;
// Made once, not per call.
const INFER_METHOD = GRPCInferenceService.method.modelInfer.name;
const INFER_PATH = methodPath(INFER_METHOD);

/** ModelInfer on the http2 engine, with the grpc-js path's span and error mapping. */
export function inferOverH2(
  engine: H2Engine,
  site: H2Site,
  request: H2Request,
  model: string,
  context: InfergateErrorOptions,
): Promise<ModelInferResponse> {
  if (request.signal?.aborted) throw abortError(request.signal, context);
  const span = startRpcSpan(site.tracing, INFER_METHOD, site.endpoint, request.headers, headersSetter, model);
  const { signal } = request;
  return engine
    .unary(request.chunks, {
      path: INFER_PATH,
      headers: request.headers,
      timeoutMs: request.timeoutMs,
      signal,
      maxMessageBytes: site.maxMessageBytes,
    })
    .then(
      (bytes) => {
        span.end(undefined, 0);
        return parseModelInferResponse(bytes);
      },
      async (error: H2StatusError) => {
        const mapped = signal?.aborted ? abortError(signal, context) : fromGrpcStatus(error, context);
        span.end(mapped, error.code);
        throw await explainFailedConnect(mapped, site.endpoints, signal);
      },
    );
}

/** ModelStreamInfer with one request on the http2 engine (stream sessions stay on grpc-js). */
export function streamOverH2(
  engine: H2Engine,
  site: H2Site,
  request: H2Request,
  model: string,
): OneRequestStream {
  const method = GRPCInferenceService.method.modelStreamInfer.name;
  const span = startRpcSpan(site.tracing, method, site.endpoint, request.headers, headersSetter, model);
  const frames = engine.serverStream(request.chunks, {
    path: methodPath(method),
    headers: request.headers,
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    maxMessageBytes: site.maxMessageBytes,
  });
  async function* messages(): AsyncIterable<ModelStreamInferResponse> {
    for await (const frame of frames) {
      let message: ModelStreamInferResponse;
      try {
        message = fromBinary(ModelStreamInferResponseSchema, frame);
      } catch (error) {
        // grpc-js's wording for an answer that does not parse, which the error mapping reads as DATA_LOSS.
        throw new H2StatusError({
          code: 13,
          details: `Response message parsing error: ${(error as Error).message}`,
          metadata: {},
        });
      }
      yield message;
    }
  }
  let ended = false;
  return {
    messages: messages(),
    // Leaving the loop returns the generator, which cancels the call.
    cancel: () => {},
    end: (failure?: InfergateError) => {
      if (ended) return;
      ended = true;
      span.end(failure, failure?.grpcCode ?? (failure ? undefined : 0));
    },
  };
}
