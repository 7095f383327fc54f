import { buildInferRequest, type InferOptions } from '../infer-request.js';
import { InferResult } from '../result.js';
import type { InputTensor } from '../tensor.js';
import type { InferTransport } from '../transport.js';

// The gRPC and the HTTP client infer the same way: validate and encode once, then hand the wire
// request to whatever transport (interceptors, batcher, router) sits below the client.

/** One inference through `transport`; inputs are validated and encoded before anything is sent. */
export async function inferThrough(
  transport: InferTransport,
  model: string,
  inputs: readonly InputTensor[],
  options: InferOptions,
): Promise<InferResult> {
  const request = buildInferRequest(model, inputs, options);
  return new InferResult(await transport.infer(request, options));
}

/** The responses of one request through `transport`'s stream, as results. */
export async function* inferStreamThrough(
  transport: InferTransport,
  model: string,
  inputs: readonly InputTensor[],
  options: InferOptions,
): AsyncIterable<InferResult> {
  const request = buildInferRequest(model, inputs, options);
  for await (const response of transport.stream(request, options)) yield new InferResult(response);
}
