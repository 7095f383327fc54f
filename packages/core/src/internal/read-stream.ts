import { ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';
import type { ModelStreamInferResponse } from '../gen/grpc_service_pb.js';
import type { GrpcTransport } from '../grpc-transport.js';
import type { OneRequestStream } from '../h2/stream-over-h2.js';
import type { Parameters } from '../parameters.js';
import type { CallOptions, InferRequest, InferResponse } from '../transport.js';
import { fromModelInferResponse } from './infer-response.js';
import { classifyStreamError } from './triton-messages.js';

/**
 * Reads one request's responses from ModelStreamInfer until Triton's final-response flag (works for
 * decoupled models, 0..N responses, and plain ones). Leaving early cancels the call; every failure
 * goes through `mapError` once.
 */
export async function* readStream(
  stream: OneRequestStream,
  bound: ReadonlyMap<string, Parameters>,
  context: InfergateErrorOptions,
  mapError: (error: unknown) => Promise<InfergateError>,
): AsyncIterable<InferResponse> {
  let failure: InfergateError | undefined;
  let finished = false;
  try {
    let final = false;
    for await (const message of stream.messages) {
      if (message.errorMessage !== '') throw classifyStreamError(message.errorMessage, context);
      if (message.inferResponse === undefined) continue;
      const response = fromModelInferResponse(message.inferResponse, bound);
      final = response.parameters.triton_final_response === true;
      if (response.outputs.length > 0 || !final) yield response;
      if (final) break;
    }
    // We ask for Triton's final-response flag: a stream that closes without it was cut short.
    if (!final) {
      throw new InfergateError(
        ErrorCode.Unavailable,
        'the stream ended before the final response (triton_final_response)',
        context,
      );
    }
    finished = true;
  } catch (error) {
    failure = await mapError(error);
    throw failure;
  } finally {
    if (!finished) stream.cancel();
    stream.end(failure);
  }
}

/** One request on a grpc-js ModelStreamInfer call, written and half-closed. */
export function grpcOneRequestStream(
  transport: GrpcTransport,
  request: InferRequest,
  options: CallOptions,
): OneRequestStream {
  const bytes = transport.encodeStreamRequest(request, options);
  const stream = transport.openStreamCall(options, request.model);
  stream.call.write(bytes);
  stream.call.end();
  return {
    messages: stream.call as AsyncIterable<ModelStreamInferResponse>,
    cancel: () => stream.call.cancel(),
    end: stream.end,
  };
}
