import type { RpcContext } from './handler-table.js';
import { runInference } from './inference-pipeline.js';
import type { EarlyAnswerContext } from './internal/early-answer.js';
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
  const responses = runInference(state, message, context, 'unary');
  for (;;) {
    const next = await responses.next();
    if (next.done === true) break;
    first ??= next.value;
    if ((context as EarlyAnswerContext).answerAfter !== undefined) {
      // Held until its execution ends (decision 0023): the transport waits for that; the rest of the
      // pipeline (the end's statistics) runs on by itself and reports its errors through the hold.
      void finish(responses);
      return first;
    }
  }
  if (first === undefined) throw new RpcError(13, `model '${message.modelName}' produced no response`);
  return first;
}

/** Runs what is left of a held answer's pipeline; its failures reach the call through the hold. */
async function finish(responses: AsyncGenerator<ModelInferResponse, void, undefined>): Promise<void> {
  try {
    while ((await responses.next()).done !== true) {}
  } catch {
    // Counted by the pipeline; the transport reports the call's error from the hold.
  }
}
