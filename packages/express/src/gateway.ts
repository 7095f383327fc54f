import type { InferOptions, InferResult, InputTensor } from '@infergate/core';
import type { ChatModel } from '@infergate/llm';

/**
 * What the handlers call: build it once per process (a TritonClient whose transport is a batcher or
 * router, a chat router, cost wrappers) and share it across requests and warm invocations.
 */
export interface Gateway {
  triton?: {
    infer(model: string, inputs: readonly InputTensor[], options?: InferOptions): Promise<InferResult>;
  };
  chat?: ChatModel;
}
