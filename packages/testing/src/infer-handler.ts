import type { RpcContext } from './handler-table.js';
import { runInference } from './inference-pipeline.js';
import type { ModelInferRequest, ModelInferResponse } from './internal/proto.js';
import { RpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';

/** ModelInfer: the shared inference pipeline, which yields exactly one response here. */
export async function handleModelInfer(
  state: ServerState,
  message: ModelInferRequest,
  context: RpcContext,
): Promise<ModelInferResponse> {
  let first: ModelInferResponse | undefined;
  for await (const response of runInference(state, message, context, 'unary')) first ??= response;
  if (first === undefined) throw new RpcError(13, `model '${message.modelName}' produced no response`);
  return first;
}
