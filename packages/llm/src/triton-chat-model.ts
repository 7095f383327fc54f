import { type InferTransport, parseOptions, type TritonClient } from '@infergate/core';
import { z } from 'zod';
import type { TextOutputMode } from './internal/triton-output.js';
import { tritonWireChatModel } from './internal/triton-wire.js';
import { formatChatPrompt } from './prompt-format.js';
import type { SamplingStyle } from './triton-inputs.js';
import type { ChatMessage, ChatModel } from './types.js';

export interface TritonChatModelOptions {
  /** A TritonClient (its transport, interceptors included, carries the calls) or any InferTransport. */
  client: TritonClient | InferTransport;
  /** The Triton model used when a request names none (e.g. "ensemble", "vllm_model"). */
  model?: string;
  /** @default '' (the server's version policy) */
  modelVersion?: string;
  /** @default 'text_input' */
  inputName?: string;
  /** @default 'text_output' */
  outputName?: string;
  /** Add a batch dimension of 1 to every input (models with max_batch_size > 0, e.g. TRT-LLM's ensemble). @default false */
  batchDimension?: boolean;
  /** How maxTokens, temperature and stop travel (see SamplingStyle). @default 'tensors' */
  samplingStyle?: SamplingStyle;
  /** Whether each response holds the new text or all text so far. @default 'delta' */
  textOutput?: TextOutputMode;
  /** Send `exclude_input_in_output` = true. @default true */
  excludeInputInOutput?: boolean;
  /** Ask for `num_input_tokens` / `num_output_tokens` (vLLM r24.12+, TRT-LLM); else usage is unknown. @default false */
  returnTokenCounts?: boolean;
  /** Ask for the `finish_reason` output (vLLM backend). @default false */
  returnFinishReason?: boolean;
  /** `max_tokens` when a request gives none (TRT-LLM's ensemble requires it). @default none */
  defaultMaxTokens?: number;
  /** Decoupled model (ModelStreamInfer, the vLLM/TRT-LLM default); false uses ModelInfer for `chat`. @default true */
  decoupled?: boolean;
  /** Turns the messages into the model's prompt. @default formatChatPrompt */
  formatPrompt?: (messages: readonly ChatMessage[]) => string;
  /** `ChatModel.provider` and gen_ai.provider.name. @default 'triton' */
  provider?: string;
  contextWindow?: number;
  /** Deadline for each call, in ms (DEADLINE_EXCEEDED). */
  timeoutMs?: number;
  /** @default true */
  tracing?: boolean;
  /** @default false */
  captureContent?: boolean;
}

function isTritonClient(value: TritonClient | InferTransport): value is TritonClient {
  return 'transport' in value && 'hasEndpoint' in value && typeof value.transport?.stream === 'function';
}

const optionsSchema = z.strictObject({
  client: z.custom<TritonClient | InferTransport>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      ((typeof (value as InferTransport).infer === 'function' &&
        typeof (value as InferTransport).stream === 'function') ||
        typeof (value as TritonClient).transport === 'object'),
    'client must be a TritonClient or an InferTransport',
  ),
  model: z.string().min(1).optional(),
  modelVersion: z.string().optional(),
  inputName: z.string().min(1).optional(),
  outputName: z.string().min(1).optional(),
  batchDimension: z.boolean().optional(),
  samplingStyle: z.enum(['tensors', 'sampling-parameters', 'parameters']).optional(),
  textOutput: z.enum(['delta', 'cumulative']).optional(),
  excludeInputInOutput: z.boolean().optional(),
  returnTokenCounts: z.boolean().optional(),
  returnFinishReason: z.boolean().optional(),
  defaultMaxTokens: z.number().int().positive().optional(),
  decoupled: z.boolean().optional(),
  formatPrompt: z
    .custom<(messages: readonly ChatMessage[]) => string>(
      (value) => typeof value === 'function',
      'formatPrompt must be a function',
    )
    .optional(),
  provider: z.string().min(1).optional(),
  contextWindow: z.number().int().positive().optional(),
  timeoutMs: z.number().positive().optional(),
  tracing: z.boolean().optional(),
  captureContent: z.boolean().optional(),
});

/**
 * A Triton-hosted LLM behind the text_input/text_output convention of the vLLM and TensorRT-LLM
 * backends: BYTES `text_input`, BOOL `stream`, sampling settings as tensors, JSON or parameters,
 * one or many responses with BYTES `text_output`.
 */
export function createTritonChatModel(options: TritonChatModelOptions): ChatModel {
  parseOptions(optionsSchema, options, 'Triton chat model options');
  const client = options.client;
  const transport = isTritonClient(client) ? client.transport : client;
  const server =
    isTritonClient(client) && client.hasEndpoint
      ? { address: client.grpc.endpoint.host, port: client.grpc.endpoint.port }
      : undefined;
  return tritonWireChatModel({
    transport,
    call: {
      provider: options.provider ?? 'triton',
      defaultModel: options.model,
      defaultMaxTokens: options.defaultMaxTokens,
      endpoint: server === undefined ? undefined : `${server.address}:${server.port}`,
      server,
      secrets: [],
      timeoutMs: options.timeoutMs,
      tracing: options.tracing ?? true,
      captureContent: options.captureContent ?? false,
    },
    inputs: {
      inputName: options.inputName ?? 'text_input',
      outputName: options.outputName ?? 'text_output',
      batchDimension: options.batchDimension ?? false,
      samplingStyle: options.samplingStyle ?? 'tensors',
      excludeInputInOutput: options.excludeInputInOutput ?? true,
      returnTokenCounts: options.returnTokenCounts ?? false,
      returnFinishReason: options.returnFinishReason ?? false,
    },
    modelVersion: options.modelVersion,
    textOutput: options.textOutput ?? 'delta',
    decoupled: options.decoupled ?? true,
    contextWindow: options.contextWindow,
    formatPrompt: options.formatPrompt ?? formatChatPrompt,
  });
}
