import { status } from '@grpc/grpc-js';
import type { RpcContext } from './handler-table.js';
import { readInferRequest } from './infer-request.js';
import { buildInferResponse, corruptInferResponse } from './infer-response.js';
import type { ModelInferRequest, ModelInferResponse } from './internal/proto.js';
import { sleep } from './internal/sleep.js';
import { RpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';

/**
 * ModelInfer: injected fault (delay, status) → model and version lookup → Triton's validation →
 * `execute` with the call's abort signal → the requested outputs, with the request id echoed.
 */
export async function handleModelInfer(
  state: ServerState,
  message: ModelInferRequest,
  context: RpcContext,
): Promise<ModelInferResponse> {
  state.stats.of(message.modelName).requests += 1;
  try {
    const fault = state.faults.take(message.modelName);
    if (fault !== undefined) {
      await sleep(fault.delayMs, context.signal);
      if (fault.code !== undefined && fault.code !== status.OK) throw new RpcError(fault.code, fault.message);
    }
    const { model, version } = state.models.resolve(message.modelName, message.modelVersion);
    const request = readInferRequest(model, version, message, context.metadata);
    state.stats.executionStarted(model.name, request.batchSize);
    let outputs: Awaited<ReturnType<typeof model.execute>>;
    try {
      outputs = await model.execute(request, { signal: context.signal });
    } finally {
      state.stats.executionEnded(model.name);
    }
    const response = buildInferResponse(request, outputs);
    return fault?.malformed ? corruptInferResponse(response) : response;
  } catch (error) {
    if (!context.signal.aborted) state.stats.of(message.modelName).failures += 1;
    throw error;
  }
}
