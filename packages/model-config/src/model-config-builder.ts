import { type ModelConfig, ModelConfigSchema } from '@infergate/core/proto';
import { buildMessage } from './internal/build-message.js';
import type { ModelConfigInit } from './message-init.js';
import { validateModelConfig } from './validate-model-config.js';

/**
 * Builds a Triton model configuration from a typed plain object and validates it: unknown fields,
 * wrong kinds, out-of-range numbers, unknown enum names, two members of one oneof, and the rules
 * Triton applies at load time (see `modelConfigProblems()`) all fail with one
 * `InfergateError(INVALID_ARGUMENT)` that lists every problem with its path.
 *
 * ```ts
 * const config = buildModelConfig({
 *   name: 'resnet', platform: 'onnxruntime_onnx', maxBatchSize: 32,
 *   input: [{ name: 'x', dataType: 'FP32', dims: [3, 224, 224] }],
 *   output: [{ name: 'y', dataType: 'FP32', dims: [1000] }],
 *   dynamicBatching: { preferredBatchSize: [8, 16], maxQueueDelayMicroseconds: 500,
 *     defaultQueuePolicy: { maxQueueSize: 256, defaultTimeoutMicroseconds: 100_000 } },
 *   instanceGroup: [{ kind: 'KIND_GPU', count: 2, gpus: [0] }],
 * });
 * ```
 */
export function buildModelConfig(init: ModelConfigInit): ModelConfig {
  const config = buildMessage(ModelConfigSchema, init, 'model config');
  return validateModelConfig(config);
}
