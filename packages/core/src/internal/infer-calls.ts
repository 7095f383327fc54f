import { buildInferRequest, type InferOptions } from '../infer-request.js';
import { InferResult } from '../result.js';
import type { InputTensor } from '../tensor.js';
import type { InferRequest, InferResponse, InferTransport } from '../transport.js';
import { checkOutputsInto, hasOutputsInto, writeOutputsInto } from './infer-response-into.js';

// The gRPC and the HTTP client infer the same way: validate and encode once, then hand the wire
// request to whatever transport (interceptors, batcher, router) sits below the client.

/** One inference through `transport`; inputs are validated and encoded before anything is sent. */
export function inferThrough(
  transport: InferTransport,
  model: string,
  inputs: readonly InputTensor[],
  options: InferOptions,
): Promise<InferResult> {
  // Not an async function: its frame, kept across the await, was about 250 bytes of every call's
  // garbage; a `then` with a shared callback costs one promise. Errors still reject, never throw,
  // and a transport's thenable still gives a native promise (`Promise.resolve` of a native one is
  // that one, nothing allocated).
  try {
    const request = buildInferRequest(model, inputs, options);
    const answer = Promise.resolve(transport.infer(request, options));
    return hasOutputsInto(request.outputs)
      ? answer.then((response) => toResultInto(request, response))
      : answer.then(toResult);
  } catch (error) {
    return Promise.reject(error);
  }
}

function toResult(response: InferResponse): InferResult {
  return new InferResult(response);
}

/**
 * The result of a call with outputs bound to `into`. The transports below write them there; this
 * writes them for one that did not (a custom transport), at no cost when the bytes are in place.
 */
function toResultInto(request: InferRequest, response: InferResponse): InferResult {
  return new InferResult(writeOutputsInto(request, response), request.outputs);
}

/** The responses of one request through `transport`'s stream, as results. */
export async function* inferStreamThrough(
  transport: InferTransport,
  model: string,
  inputs: readonly InputTensor[],
  options: InferOptions,
): AsyncIterable<InferResult> {
  const request = buildInferRequest(model, inputs, options);
  if (request.outputs !== undefined) checkOutputsInto(request.outputs, true);
  for await (const response of transport.stream(request, options)) yield new InferResult(response);
}
