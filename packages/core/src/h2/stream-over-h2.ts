// ModelStreamInfer with one request on the http2 engine; in grpc-wire.ts, as it decodes with the protobuf runtime.
import { fromBinary } from '@bufbuild/protobuf';
import type { InfergateError } from '../errors.js';
import {
  GRPCInferenceService,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from '../gen/grpc_service_pb.js';
import { headersSetter, RPC_SERVICE, startRpcSpan } from '../internal/tracing.js';
import { type H2Engine, H2StatusError } from './h2-engine.js';
import type { H2Request, H2Site } from './infer-over-h2.js';

/** One request on ModelStreamInfer, whichever engine carries it. */
export interface OneRequestStream {
  messages: AsyncIterable<ModelStreamInferResponse>;
  cancel(): void;
  end(failure?: InfergateError): void;
}

const methodPath = (name: string) => `/${RPC_SERVICE}/${name}`;

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
