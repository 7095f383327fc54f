import { randomUUID } from 'node:crypto';
import {
  buildInferRequest,
  ErrorCode,
  InfergateError,
  type InferResponse,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import { CallScope } from './internal/call-scope.js';
import { startChatSpan } from './internal/chat-span.js';
import { resolveModel } from './internal/resolve-model.js';
import { type TextOutputMode, TritonOutputReader } from './internal/triton-output.js';
import { formatChatPrompt } from './prompt-format.js';
import { buildTritonInputs, type SamplingStyle, type TritonInputSettings } from './triton-inputs.js';
import type {
  ChatCallOptions,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
} from './types.js';

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
  return 'transport' in value && 'grpc' in value && typeof value.transport?.stream === 'function';
}

/**
 * A Triton-hosted LLM behind the text_input/text_output convention of the vLLM and TensorRT-LLM
 * backends: BYTES `text_input`, BOOL `stream`, sampling settings as tensors, JSON or parameters,
 * one or many responses with BYTES `text_output`.
 */
export function createTritonChatModel(options: TritonChatModelOptions): ChatModel {
  if (options === undefined || options.client === undefined || options.client === null) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'createTritonChatModel needs a client or transport');
  }
  const client = options.client;
  const transport = isTritonClient(client) ? client.transport : client;
  const server = isTritonClient(client)
    ? { address: client.grpc.endpoint.host, port: client.grpc.endpoint.port }
    : undefined;
  const provider = options.provider ?? 'triton';
  const settings: TritonInputSettings = {
    inputName: options.inputName ?? 'text_input',
    outputName: options.outputName ?? 'text_output',
    batchDimension: options.batchDimension ?? false,
    samplingStyle: options.samplingStyle ?? 'tensors',
    excludeInputInOutput: options.excludeInputInOutput ?? true,
    returnTokenCounts: options.returnTokenCounts ?? false,
    returnFinishReason: options.returnFinishReason ?? false,
  };
  const outputName = settings.outputName;
  const mode = options.textOutput ?? 'delta';
  const formatPrompt = options.formatPrompt ?? formatChatPrompt;
  const decoupled = options.decoupled ?? true;

  async function* responses(
    request: ChatRequest,
    model: string,
    stream: boolean,
    scope: CallScope,
  ): AsyncGenerator<InferResponse> {
    const effective =
      request.maxTokens === undefined && options.defaultMaxTokens !== undefined
        ? { ...request, maxTokens: options.defaultMaxTokens }
        : request;
    const { inputs, parameters, outputs } = buildTritonInputs(
      settings,
      formatPrompt(request.messages),
      effective,
      stream,
    );
    const inferRequest = buildInferRequest(model, inputs, {
      requestId: `chat-${randomUUID()}`,
      parameters,
      outputs,
      ...(options.modelVersion === undefined ? {} : { modelVersion: options.modelVersion }),
    });
    const callOptions = { signal: scope.signal };
    if (decoupled) yield* transport.stream(inferRequest, callOptions);
    else yield await transport.infer(inferRequest, callOptions);
  }

  function begin(request: ChatRequest, callOptions: ChatCallOptions) {
    const model = resolveModel(request, options.model, provider);
    const scope = new CallScope(callOptions, options.timeoutMs, {
      provider,
      model,
      ...(server === undefined ? {} : { endpoint: `${server.address}:${server.port}` }),
      secrets: [],
    });
    const maxTokens = request.maxTokens ?? options.defaultMaxTokens;
    const span = startChatSpan({
      enabled: options.tracing ?? true,
      captureContent: options.captureContent ?? false,
      provider,
      request: { ...request, model, ...(maxTokens === undefined ? {} : { maxTokens }) },
      server,
    });
    return { model, scope, span, maxTokens, reader: new TritonOutputReader(outputName, mode) };
  }

  async function chat(request: ChatRequest, callOptions: ChatCallOptions = {}): Promise<ChatResponse> {
    const { model, scope, span, maxTokens, reader } = begin(request, callOptions);
    try {
      for await (const response of responses(request, model, false, scope)) reader.read(response);
      const result: ChatResponse = {
        id: reader.id,
        model: reader.model || model,
        text: reader.text,
        finishReason: reader.finishReason(maxTokens),
        rawFinishReason: reader.rawFinishReason,
        usage: reader.usage(),
        provider,
      };
      span.end({ ...result, finishReason: result.rawFinishReason ?? result.finishReason });
      return result;
    } catch (error) {
      const mapped = scope.toError(error);
      span.end(undefined, mapped);
      throw mapped;
    } finally {
      scope.dispose();
    }
  }

  async function* chatStream(
    request: ChatRequest,
    callOptions: ChatCallOptions = {},
  ): AsyncGenerator<ChatStreamEvent, void, undefined> {
    const { model, scope, span, maxTokens, reader } = begin(request, callOptions);
    let failure: InfergateError | undefined;
    let completed = false;
    try {
      for await (const response of responses(request, model, true, scope)) {
        const delta = reader.read(response);
        if (delta !== '') yield { type: 'text-delta', text: delta };
      }
      const usage = reader.usage();
      const finishReason = reader.finishReason(maxTokens);
      const id = reader.id;
      const responseModel = reader.model || model;
      completed = true;
      span.end({
        id,
        model: responseModel,
        finishReason: reader.rawFinishReason ?? finishReason,
        usage,
        text: reader.text,
      });
      yield { type: 'usage', usage };
      yield {
        type: 'finish',
        finishReason,
        rawFinishReason: reader.rawFinishReason,
        id,
        model: responseModel,
      };
    } catch (error) {
      failure = scope.toError(error);
      throw failure;
    } finally {
      if (!completed) {
        scope.abort();
        span.end({ id: reader.id, model: reader.model || model, text: reader.text }, failure);
      }
      scope.dispose();
    }
  }

  return {
    provider,
    ...(options.model === undefined ? {} : { defaultModel: options.model }),
    ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
    chat,
    chatStream,
  };
}
